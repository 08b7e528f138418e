"""The rows of the threat model: the statuses, the attackers, what the scans look for (:class:`Needles`) and one
attacker's verdict (:class:`Row`), shared by the checks (:mod:`tdebench.verify.threat_checks`) and the model that
orders and words them (:mod:`tdebench.verify.threats`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from tdebench.encryption import redact
from tdebench.verify import atrest

PROTECTED, EXPOSED, NOT_APPLICABLE, NOT_CHECKED = "protected", "exposed", "not applicable", "not checked"
STATUSES = (PROTECTED, EXPOSED, NOT_APPLICABLE, NOT_CHECKED)

# row id -> (the attacker, as the table names it; the phrase a verdict sentence uses)
ATTACKERS: dict[str, tuple[str, str]] = {
    "data_dir": ("copy of the data directory", "a stolen data directory"),
    "redo_log": ("its redo log / WAL", "the redo log / WAL"),
    "gcache": ("a copy of one node's replication cache (gcache)", "a node's replication cache"),
    "state_transfer": ("the files a joining node received (state transfer)", "a state transfer"),
    "disk": ("copy of the whole disk (key files and configuration included)", "a copy of the whole disk"),
    "live_host": ("a process on the running host reading its files (root, or the server's OS user)",
                  "a process on the running host that reads its files"),
    "host_keys": ("the running host: root (or the server's OS user) taking the keys",
                  "root on the running host"),
    "backups": ("backups", "backups"),
    "statement_log": ("server logs with statement logging", "the statement log"),
    "temp_files": ("temporary and spill files during the run", "temporary and spill files"),
    "swap_core": ("swap and core dumps", "swap and core dumps"),
    "select_user": ("a database user with SELECT", "a database user with SELECT"),
    "network": ("an observer of the network", "a network observer"),
    "replication": ("an observer of the network between a cluster's nodes", "the traffic between the nodes"),
}
ORDER = ("data_dir", "redo_log", "gcache", "state_transfer", "disk", "live_host", "host_keys", "backups",
         "statement_log", "temp_files", "swap_core", "select_user", "network", "replication")


@dataclass(frozen=True)
class Needles:
    """What the scans look for: canary values (shown by name only) and the data's known plaintext."""

    canaries: tuple[str, ...]
    known: tuple[str, ...] = ()

    @property
    def named(self) -> list[tuple[str, str]]:
        """(name, value) of every needle: ``canary-N`` for the canaries, ``known:<text>`` for known plaintext."""
        names = atrest.canary_names(list(self.canaries))
        return [(names[c], c) for c in self.canaries] + [(f"known:{k}", k) for k in self.known
                                                        if k not in self.canaries]

    def values(self) -> list[str]:
        return [v for _, v in self.named]

    def name_counts(self, counts: dict[str, int]) -> dict[str, int]:
        """{value: n} -> {name: n} for the needles found (n > 0)."""
        names = dict((v, n) for n, v in self.named)
        return {names[v]: c for v, c in counts.items() if c and v in names}

    def count_in(self, data: bytes) -> dict[str, int]:
        """Hits per needle name in ``data``."""
        return {name: data.count(value.encode()) for name, value in self.named if value.encode() in data}

    def scrub(self, text: str) -> str:
        """``text`` with every canary value replaced by its name and every issued secret by ``***``."""
        for name, value in self.named:
            if name.startswith("canary-"):
                text = text.replace(value, name)
        return redact(text)


@dataclass
class Row:
    """One attacker's verdict for one config."""

    id: str
    status: str
    summary: str
    evidence: dict[str, Any] = field(default_factory=dict)
    attacker: str = ""

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"unknown threat status {self.status!r}")
        if not self.attacker:
            base = self.id.split(":", 1)[0]
            self.attacker = ATTACKERS.get(base, (self.id, self.id))[0]

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, "attacker": self.attacker, "status": self.status, "summary": self.summary,
                "evidence": self.evidence}


def guarded(row_id: str, check: Callable[[], Row], scrub: Callable[[str], str], timing: str = "check_seconds") -> Row:
    """Run one check; an error in it makes its row "not checked" with the (scrubbed) reason. Its duration is
    recorded in the evidence under ``timing``."""
    started = time.perf_counter()
    try:
        row = check()
    except Exception as exc:  # noqa: BLE001 - one failing probe must not hide the other rows
        row = Row(row_id, NOT_CHECKED, f"the check failed: {scrub(f'{type(exc).__name__}: {exc}')[:300]}")
    row.evidence[timing] = round(time.perf_counter() - started, 3)
    return row


def backup_phrase(kind: str, info: dict[str, Any]) -> str:
    """``physical backups (mariadb-backup)`` / ``logical dumps (mariadb-dump)``."""
    return f"{'logical dumps' if info.get('logical') else 'physical backups'} ({kind})"


def fmt_bytes(n: float) -> str:
    """``841 bytes``, ``1.6 KiB``, ``561.9 MiB``."""
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{int(n)} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def backup_rows(verdicts: dict[str, Any], note: str) -> list[Row]:
    """One row per backup kind the backup workload made and scanned; one "not checked" row otherwise."""
    backups = verdicts.get("backups") or {}
    if not backups:
        return [Row("backups", NOT_CHECKED, note)]
    rows = []
    for kind, v in sorted(backups.items()):
        info = (verdicts.get("kinds") or {}).get(kind, {})
        status = PROTECTED if v.get("encrypted") else EXPOSED
        evidence = {k: v.get(k) for k in ("files_scanned", "bytes_scanned", "marker_hits", "known_plaintext_hits",
                                          "files_with_hits", "block", "at")}
        evidence.update(tool=info.get("tool"), logical=info.get("logical"), compressed=info.get("compressed"))
        size = fmt_bytes(int(v.get("bytes_scanned") or 0))
        summary = (f"{v.get('files_scanned', 0)} file(s) of the backup scanned ({size}, decompressed): "
                   f"{v.get('marker_hits', 0)} canary and {v.get('known_plaintext_hits', 0)} known-plaintext hits"
                   + (f"; written to {v['location']}" if v.get("location") else ""))
        evidence["location"] = v.get("location")
        rows.append(Row(f"backups:{kind}", status, summary, evidence,
                        attacker=f"backup: {kind} ({'logical' if info.get('logical') else 'physical'}"
                                 f"{', compressed' if info.get('compressed') else ''})"))
    return rows


def attackers_of(row_lists: Iterable[Iterable[dict[str, Any]]]) -> list[tuple[str, str]]:
    """(row id, attacker) of every row in ``row_lists`` (e.g. one list per config), each id once, in the order
    the rows come."""
    seen: dict[str, str] = {}
    for rows in row_lists:
        for row in rows:
            seen.setdefault(str(row.get("id")), str(row.get("attacker")))
    return list(seen.items())


def join_words(items: list[str], last: str = "and") -> str:
    """``a``, ``a and b``, ``a, b and c`` (duplicates dropped)."""
    items = list(dict.fromkeys(items))
    if len(items) < 3:
        return f" {last} ".join(items)
    return ", ".join(items[:-1]) + f", {last} " + items[-1]

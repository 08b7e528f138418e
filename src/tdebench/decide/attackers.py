"""``--against``: the attackers a DBA names, as rows of the threat model (docs/security.md).

Every row of :data:`tdebench.verify.threat_rows.ORDER` is accepted under its own id written with dashes
(``data-dir``, ``live-host``, ``select-user``, ...); the names below are the words a DBA uses for the same rows. The
``backups`` row stands for every backup kind a backup run made (``backups:<kind>``)."""

from __future__ import annotations

from dataclasses import dataclass

from tdebench.errors import UsageError
from tdebench.verify.threat_rows import ATTACKERS, ORDER

#: what a DBA calls an attacker -> the threat model's row id
NAMES: dict[str, str] = {
    "stolen-disk": "disk",
    "stolen-datadir": "data_dir",
    "redo-log": "redo_log",
    "host-root": "live_host",
    "backups": "backups",
    "logs": "statement_log",
    "temp-files": "temp_files",
    "swap": "swap_core",
    "db-user": "select_user",
    "network": "network",
}
DEFAULT = ("stolen-disk",)


@dataclass(frozen=True)
class Attacker:
    """One attacker of ``--against``: the name typed and the threat-model row it selects."""

    name: str
    row: str

    @property
    def title(self) -> str:
        """How the threat model's table names the row."""
        return ATTACKERS.get(self.row, (self.row, self.row))[0]

    @property
    def phrase(self) -> str:
        """How a sentence names the attacker (``a copy of the whole disk``)."""
        return ATTACKERS.get(self.row, (self.row, self.row))[1]

    def selects(self, row_id: str) -> bool:
        """Whether threat-model row ``row_id`` is this attacker's (a backup kind's row is ``backups``')."""
        return row_id == self.row or row_id.split(":", 1)[0] == self.row

    def to_json(self) -> dict[str, str]:
        return {"name": self.name, "row": self.row}


def known_names() -> dict[str, str]:
    """Every accepted name -> row id: the DBA's words, then each row's own id with dashes."""
    out = dict(NAMES)
    for row in ORDER:
        out.setdefault(row.replace("_", "-"), row)
    return out


def parse_attackers(text: str | None) -> list[Attacker]:
    """``stolen-disk,backups`` -> attackers (duplicates dropped); UsageError listing the known names."""
    words = [w.strip().lower() for w in (text if text is not None else ",".join(DEFAULT)).split(",") if w.strip()]
    if not words:
        raise UsageError("empty --against", f"name one or more attackers, e.g. --against {','.join(DEFAULT)}")
    known = known_names()
    unknown = [w for w in words if w not in known]
    if unknown:
        raise UsageError(f"unknown attacker '{unknown[0]}' in --against",
                         f"use one or more of: {', '.join(known)} (docs/decide.md)")
    out: dict[str, Attacker] = {}
    for word in words:
        out.setdefault(known[word], Attacker(word, known[word]))
    return list(out.values())


def from_json(items: list[dict[str, str]]) -> list[Attacker]:
    return [Attacker(str(i.get("name", "")), str(i.get("row", ""))) for i in items if isinstance(i, dict)]

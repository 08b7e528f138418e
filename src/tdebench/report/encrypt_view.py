"""The ``encrypt`` workload's switching table: per config and switch (on, re-keying, the way back), how the engine
did it (online while serving, or offline with the service stopped), the time to done, the extra disk, what the
background felt meanwhile and after against the steady phase just before (paired per trial: geometric-mean ratio
with a 95% t interval), and the plaintext the scan found afterwards (docs/workloads/encrypt.md).

One model (:func:`switch_rows`) and one set of cell texts (:func:`cells`) feed every view: the terminal, summary.md,
index.html and ``report/switching.csv``, so one quantity shows one number everywhere."""

from __future__ import annotations

import re
from dataclasses import dataclass
from statistics import median

from tdebench.report.fmt import DASH, fmt_bytes, fmt_value
from tdebench.report.htmlkit import Col, Safe, join, pill, table, tag
from tdebench.report.mdkit import md_table
from tdebench.stats.load import Measurements
from tdebench.stats.paired import PairedRatio, paired_ratio

TEST = "encrypt"
# action -> (shown name, its phase, the steady phase just before it, the steady phase after it)
ACTIONS = {"on": ("switch on", "during_on", "before", "after_on"),
           "rekey": ("re-keying", "during_rekey", "before_rekey", "after_rekey"),
           "rotate": ("rotation by key version", "during_rotate", "before_rotate", "after_rotate"),
           "off": ("way back", "during_off", "before_off", "after_off")}
OFFLINE = "offline"
# the scan's verdict beside the time to done: the widest tables scroll, and it must not be the column out of sight
COLUMNS = ("config", "method", "switch", "time to done", "plaintext left in scope", "peak extra disk",
           "tables: before → UPDATE → VACUUM → VACUUM FULL", "TPM just before", "TPM meanwhile ÷ before",
           "p95 meanwhile ÷ before", "TPM after ÷ before", "longest stall meanwhile")
LEFT = COLUMNS.index("plaintext left in scope")
NUMERIC = set(COLUMNS[3:]) - {COLUMNS[LEFT]}
#: columns of report/switching.csv (full precision; the views format these numbers)
CSV_FIELDS = ("config", "cycle", "threads", "method", "action", "trials", "time_to_done_s", "peak_extra_bytes",
              "tables_before_bytes", "tables_after_update_bytes", "tables_after_vacuum_bytes",
              "tables_after_vacuum_full_bytes", "baseline_phase", "tpm_baseline",
              "tpm_during_ratio", "tpm_during_ci95_low", "tpm_during_ci95_high",
              "p95_during_ratio", "p95_during_ci95_low", "p95_during_ci95_high",
              "tpm_after_ratio", "tpm_after_ci95_low", "tpm_after_ci95_high",
              "longest_stall_s", "plaintext_hits_in_scope", "plaintext_hits_outside_scope", "iops")
_SIZES = ("before", "after_update", "after_vacuum", "after_vacuum_full")


@dataclass
class SwitchRow:
    """One switch of one config's cycle, over the measured trials."""

    config: str
    cycle: str  # t<K> (online, K threads) or offline
    action: str  # on, rekey, off
    trials: int
    seconds: float | None  # median time to done
    extra_disk: float | None  # median peak extra bytes (offline methods)
    tables: list[float] | None  # the engine's own table sizes through the method (pgcrypto)
    tpm_before: float | None  # median TPM of the steady phase just before
    tpm: PairedRatio | None  # meanwhile / just before, per trial
    p95: PairedRatio | None
    after: PairedRatio | None  # steady after / just before, per trial
    stall: float | None  # median of the longest transaction (latency_max) meanwhile
    left: int | None  # plaintext hits in scope after it (on and rekey), None: not scanned
    outside: int | None

    @property
    def offline(self) -> bool:
        return self.cycle == OFFLINE

    @property
    def background(self) -> bool:
        """Whether a background workload ran around the switch (not with TPC-H alone)."""
        return self.tpm_before is not None

    baseline_phase: str = ""  # the steady phase the ratios pair with
    retired: str = ""  # rotation by key version: what became of the old versions (the proof)


class _Values:
    """Per-trial values of one config's ``encrypt`` series."""

    def __init__(self, m: Measurements, config: str) -> None:
        self.by: dict[tuple[str, str], dict[int, float]] = {}
        for key, sample in m.series.items():
            if key.config == config and key.test == TEST:
                self.by[(key.step, key.metric)] = {int(b): float(v) for b, v in zip(sample.blocks, sample.values)}

    def median(self, step: str, metric: str) -> float | None:
        values = list(self.by.get((step, metric), {}).values())
        return median(values) if values else None

    def ratio(self, base: str, other: str, metric: str) -> PairedRatio | None:
        """``other / base`` per trial (paired by block), mean with a t interval."""
        a, b = self.by.get((base, metric), {}), self.by.get((other, metric), {})
        blocks = sorted(set(a) & set(b))
        return paired_ratio([a[k] for k in blocks], [b[k] for k in blocks])

    def steps(self) -> set[str]:
        return {step for step, _ in self.by}


def _baseline(v: _Values, cycle: str, action: str) -> str:
    """The steady phase just before ``action``: online its own ``before*`` window; offline (no window right
    before the method) the last window that ran: ``before``, ``after_on``, then ``after_rekey`` if any."""
    if cycle != OFFLINE or action == "on":
        return f"{cycle}.{ACTIONS[action][2]}"
    earlier = ["after_on"] + (["after_rekey"] if action == "off" else [])
    found = [p for p in earlier if (f"{cycle}.{p}", "tpm") in v.by]
    return f"{cycle}.{found[-1] if found else 'before'}"


def cycle_settings(cycle: str) -> tuple[int | None, int | None]:
    """(encryption threads, page rate) a cycle's name says: ``t4`` (4, None), ``t4-iops1000`` (4, 1000); offline
    (None, None)."""
    match = re.fullmatch(r"t(\d+)(?:-iops(\d+))?", cycle)
    if match is None:
        return None, None
    return int(match[1]), int(match[2]) if match[2] else None


def _cycle_order(cycle: str) -> tuple[int, int, int]:
    threads, iops = cycle_settings(cycle)
    return (1 if threads is None else 0, threads or 0, iops or 0)


def switch_rows(m: Measurements, configs: list[str]) -> list[SwitchRow]:
    """Every switch of every config of an encrypt run, in config, cycle (thread count) and action order."""
    out = []
    for config in configs:
        v = _Values(m, config)
        steps = v.steps()
        cycles = sorted({s.split(".")[0] for s in steps if s.endswith((".on", ".off", ".rekey", ".rotate"))},
                        key=_cycle_order)
        for cycle in cycles:
            for action, (_, during, _, after) in ACTIONS.items():
                name, before = f"{cycle}.{action}", _baseline(v, cycle, action)
                done = v.median(name, "time_to_done")
                if done is None:
                    continue
                sizes = [v.median(name, f"tables_{s}_bytes") for s in _SIZES]
                hits = [v.median(f"{name}.scan", k) for k in ("canary_hits_in_scope", "known_plaintext_hits_in_scope")]
                outside = v.median(f"{name}.scan", "hits_outside_scope")
                offline = cycle == OFFLINE
                out.append(SwitchRow(
                    config, cycle, action, len(v.by.get((name, "time_to_done"), {})), done,
                    v.median(name, "peak_extra_bytes"),
                    [s for s in sizes if s is not None] if all(s is not None for s in sizes) else None,
                    v.median(before, "tpm"),
                    None if offline else v.ratio(before, f"{cycle}.{during}", "tpm"),
                    None if offline else v.ratio(before, f"{cycle}.{during}", "latency_p95"),
                    v.ratio(before, f"{cycle}.{after}", "tpm"),
                    None if offline else v.median(f"{cycle}.{during}", "latency_max"),
                    None if hits[0] is None else int(sum(h or 0 for h in hits)),
                    None if outside is None else int(outside), before, retired_text(v, f"{name}.proof")))
    return out


def retired_text(v: _Values, step: str) -> str:
    """A rotation's proof over the trials (medians): old versions destroyed after a restart that read every table,
    or what still needed them."""
    left, restarted = v.median(step, "left_behind"), v.median(step, "restarted")
    if left is None:
        return ""
    if left:
        return f"{left:g} part(s) still needed an older version: nothing retired (samples/<config>/encrypt-block*.json)"
    if not restarted:
        return "the server did not start or read without the old versions: they were restored (the finding)"
    return (f"{v.median(step, 'old_versions_destroyed') or 0:g} old version(s) destroyed, the server restarted and "
            f"read all {v.median(step, 'tables_read') or 0:g} tables")


def ratio_text(r: PairedRatio | None) -> str:
    """``0.52× [0.40, 0.64]``; no interval below 2 trials."""
    if r is None:
        return DASH
    return f"{r.mean:.2f}×" + (f" [{r.low:.2f}, {r.high:.2f}]" if r.low is not None and r.high is not None else "")


def left_text(row: SwitchRow) -> str:
    if row.left is None:
        return DASH
    text = "none" if row.left == 0 else f"{row.left} hits (finding)"
    return text + (f"; {row.outside} outside scope" if row.outside else "")


def method_text(row: SwitchRow) -> str:
    if row.offline:
        return "offline: service stopped"
    threads, iops = cycle_settings(row.cycle)
    return f"online, {threads} thread(s)" + (f", iops {iops}" if iops else "")


def cells(row: SwitchRow) -> list[str]:
    """The row's cells as every view shows them (in :data:`COLUMNS` order)."""
    stopped = "stopped" if row.offline and row.background else DASH  # no background: nothing stopped
    return [row.config, method_text(row), ACTIONS[row.action][0], fmt_value(row.seconds, "s"), left_text(row),
            DASH if row.extra_disk is None else fmt_bytes(row.extra_disk),
            " → ".join(fmt_bytes(v) for v in row.tables) if row.tables else DASH,
            fmt_value(row.tpm_before, "tpm"),
            stopped if row.offline else ratio_text(row.tpm),
            stopped if row.offline else ratio_text(row.p95), ratio_text(row.after),
            stopped if row.offline else fmt_value(row.stall, "s")]


def verdict_lines(rows: list[SwitchRow]) -> list[str]:
    """An encrypt run's verdict: per config and cycle, its switch on in the table's own words (no plain twin to
    compare with; the plaintext phases before the switch are the baseline)."""
    out = []
    for row in rows:
        if row.action == "rotate":
            out.append(f"{row.config}, {method_text(row)}: rotated by key version in {fmt_value(row.seconds, 's')}"
                       + (f", TPM meanwhile {ratio_text(row.tpm)} of just before, p95 {ratio_text(row.p95)}"
                          if row.tpm is not None else "") + (f"; {row.retired}" if row.retired else ""))
        if row.action != "on":
            continue
        text = f"{row.config}, {method_text(row)}: switched on in {fmt_value(row.seconds, 's')}"
        if row.tpm is not None:
            text += f", TPM meanwhile {ratio_text(row.tpm)} of just before, p95 {ratio_text(row.p95)}"
        out.append(text + f"; plaintext left in scope after it: {left_text(row)} (Switching)")
    return out


def shown_columns(rows: list[SwitchRow]) -> list[int]:
    """Columns with something in them (pgcrypto's table sizes and the disk only when measured)."""
    texts = [cells(r) for r in rows]
    return [i for i in range(len(COLUMNS)) if i < 4 or any(t[i] != DASH for t in texts)]


def csv_rows(rows: list[SwitchRow]) -> list[dict[str, object]]:
    """The table's numbers at full precision, one row per switch (``report/switching.csv``)."""
    out = []
    for r in rows:
        row: dict[str, object] = {
            "config": r.config, "cycle": r.cycle, "threads": cycle_settings(r.cycle)[0],
            "iops": cycle_settings(r.cycle)[1],
            "method": "offline" if r.offline else "online", "action": r.action, "trials": r.trials,
            "time_to_done_s": r.seconds, "peak_extra_bytes": r.extra_disk,
            "baseline_phase": r.baseline_phase, "tpm_baseline": r.tpm_before,
            "longest_stall_s": r.stall, "plaintext_hits_in_scope": r.left, "plaintext_hits_outside_scope": r.outside}
        for name, size in zip(_SIZES, r.tables or [None] * 4):
            row[f"tables_{name}_bytes"] = size
        for prefix, ratio in (("tpm_during", r.tpm), ("p95_during", r.p95), ("tpm_after", r.after)):
            row[f"{prefix}_ratio"] = ratio.mean if ratio else None
            row[f"{prefix}_ci95_low"] = ratio.low if ratio else None
            row[f"{prefix}_ci95_high"] = ratio.high if ratio else None
        out.append(row)
    return out


NOTE = ("Time to done: from the engine's own start to its own report that everything is in the target state. "
        "Times, TPM, stalls and scans: the median over trials. Ratios (÷ before), shown as geometric mean "
        "[95% CI]: the phase against the steady phase just before the switch (the plaintext baseline for the switch "
        "on, the encrypted steady phase for the re-keying and the way back; offline, the last window before the "
        "method), per trial, then their geometric mean over trials with a 95% t interval on the log ratios (none "
        "below 2 trials). Longest stall: the slowest transaction meanwhile. Offline: the engine cannot switch while "
        "serving; the background was stopped for that time. Peak extra disk: the instance's files sampled every "
        "100 ms (offline methods). Plaintext left: canaries and known plaintext found by the at-rest scan after the "
        "switch (or the re-keying) in files the spec covers; hits outside the scope (e.g. a redo log the spec leaves "
        "plaintext) beside.")


def html_section(rows: list[SwitchRow]) -> Safe:
    keep = shown_columns(rows)
    cols = [Col(COLUMNS[i], COLUMNS[i] in NUMERIC) for i in keep]
    body = []
    for r in rows:
        texts: list[object] = list(cells(r))
        if r.left is not None:
            texts[LEFT] = pill(texts[LEFT], "good" if r.left == 0 else "bad")  # type: ignore[arg-type]
        body.append([texts[i] for i in keep])
    return tag("section", join([tag("h2", "Switching encryption"), table(cols, body), tag("p", NOTE, class_="note")]),
               id="switching")


def md_lines(rows: list[SwitchRow]) -> list[str]:
    """The same table in summary.md."""
    keep = shown_columns(rows)
    headers = [COLUMNS[i] for i in keep]
    body = [[cells(r)[i] for i in keep] for r in rows]
    right = {n for n, i in enumerate(keep) if COLUMNS[i] in NUMERIC}
    return ["## Switching encryption", ""] + md_table(headers, body, right) + ["", f"_{NOTE}_", ""]

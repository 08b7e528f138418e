"""The ``encrypt`` workload's section of the report: per config and switch (on, re-keying, the way back), how the
engine did it (online while serving, or offline with the service stopped), the time to done, the extra disk, the
background's throughput meanwhile and the plaintext the scan found afterwards (docs/workloads/encrypt.md)."""

from __future__ import annotations

from dataclasses import dataclass

from tdebench.report.fmt import DASH, fmt_bytes, fmt_value
from tdebench.report.htmlkit import Col, Safe, join, pill, table, tag
from tdebench.report.model import RunSummary
from tdebench.stats.load import SeriesKey

TEST = "encrypt"
ACTIONS = {"on": ("switch on", "during_on"), "rekey": ("re-keying", "during_rekey"), "off": ("way back", "during_off")}


@dataclass
class SwitchRow:
    config: str
    cycle: str  # t<K> (online, K threads) or offline
    action: str
    seconds: str
    extra_disk: str
    tables: str  # the engine's own table sizes through the method (pgcrypto), else a dash
    during: str  # throughput meanwhile against the cycle's before ("stopped" offline)
    left: int | None  # plaintext hits in scope after it (on and rekey), None: not scanned


def _median(rs: RunSummary, engine: str, config: str, step: str, metric: str) -> float | None:
    s = rs.analysis.summaries.get(SeriesKey(engine, config, TEST, TEST, step, metric))
    return s.median if s is not None else None


def switch_rows(rs: RunSummary) -> list[SwitchRow]:
    out = []
    for es in rs.engines:
        for config in es.configs:
            steps = {k.step for k in rs.analysis.summaries if k.config == config and k.test == TEST}
            cycles = sorted({s.split(".")[0] for s in steps if s.endswith((".on", ".off", ".rekey"))})
            for cycle in cycles:
                for action, (_, during) in ACTIONS.items():
                    done = _median(rs, es.engine, config, f"{cycle}.{action}", "time_to_done")
                    if done is None:
                        continue
                    get = lambda step, metric: _median(rs, es.engine, config, step, metric)  # noqa: E731
                    extra = get(f"{cycle}.{action}", "peak_extra_bytes")
                    sizes = [get(f"{cycle}.{action}", f"tables_{s}_bytes")
                             for s in ("before", "after_update", "after_vacuum", "after_vacuum_full")]
                    ratio = get(f"{cycle}.{during}", "tpm_vs_before")
                    hits = [get(f"{cycle}.{action}.scan", m) for m in ("canary_hits_in_scope",
                                                                        "known_plaintext_hits_in_scope")]
                    out.append(SwitchRow(
                        config, cycle, action, fmt_value(done, "s"), DASH if extra is None else fmt_bytes(extra),
                        " → ".join(fmt_bytes(v) for v in sizes) if all(v is not None for v in sizes) else DASH,
                        "stopped" if cycle == "offline" else (DASH if ratio is None else f"{ratio:.2f}×"),
                        None if hits[0] is None else int(sum(h or 0 for h in hits))))
    return out


def html_section(rows: list[SwitchRow]) -> Safe:
    cols = [Col("config"), Col("method"), Col("switch"), Col("time to done (median)", True),
            Col("peak extra disk", True), Col("tables: before → UPDATE → VACUUM → VACUUM FULL", True),
            Col("throughput meanwhile vs before", True), Col("plaintext left in scope")]
    body = []
    for r in rows:
        method = "offline: service stopped" if r.cycle == "offline" else f"online, {r.cycle[1:]} thread(s)"
        left = (DASH if r.left is None else pill("none", "good") if r.left == 0
                else pill(f"{r.left} hits (finding)", "bad"))
        body.append([r.config, method, ACTIONS[r.action][0], r.seconds, r.extra_disk, r.tables, r.during, left])
    note = ("Time to done: from the engine's own start to its own report that everything is in the target state. "
            "Offline: the engine cannot switch while serving; the background was stopped for that time. Peak extra "
            "disk: the instance's files sampled every 100 ms (offline methods). Plaintext left: canaries and known "
            "plaintext found by the at-rest scan after the switch (or the re-keying) in files the spec covers.")
    return tag("section", join([tag("h2", "Switching encryption"), table(cols, body), tag("p", note, class_="note")]),
               id="switching")

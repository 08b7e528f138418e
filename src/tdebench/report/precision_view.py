"""Methods text for schedules, the stopping rule, CPU co-metrics and the machine's state.

Each function reads only the manifest and the analysis, so a report can be rebuilt any time; the HTML and
Markdown renderers show the paragraphs under Methods.
"""

from __future__ import annotations

import statistics
from typing import Any

from tdebench.api.presentation import COMMON_WAIT
from tdebench.report.duet_view import duet_text
from tdebench.report.model import RunSummary
from tdebench.stats.noise import NoiseSummary, summarize_noise

CPU_TEXT = ("Server CPU time per statement: the CPU time of the server's process tree read from /proc right before "
            "and right after each statement (per thread from /proc/<pid>/task/<tid>/schedstat, in nanoseconds; a "
            "process that lost a thread in between is read from /proc/<pid>/stat in 10 ms clock ticks, and children "
            "that exited come in through their parent's cutime + cstime), recorded as server_cpu next to the "
            "statement's elapsed time; client_cpu is tdebench's own CPU time over the same window without its "
            "background threads (for an embedded engine that is the engine's, recorded as server_cpu). The engine's "
            "own counters are read at the same boundaries and recorded per step under test \"counters\". "
            "Steal time and descheduling lengthen elapsed time but not CPU time, so the server CPU overhead is "
            "the steadier figure when the extra work of encryption is CPU work.")

COMMON_WAIT_TEXT = ("Time at a common wait per page read (pages read from the disk): a twin's time E for the "
                    "headline's statements is its server's CPU time C plus what it waited for, mostly its P page "
                    "reads from the disk; "
                    "E* = C + P · w, with w the wait per read pooled over the block's twins (their waits over their "
                    "reads), charges every twin the same wait for each read, that of the same minutes of the same "
                    "disk, and keeps what its own work adds: the CPU of decrypting every page and the reads it makes. "
                    "On a virtual disk whose speed drifts from minute to minute it leaves that drift out of the "
                    "comparison (not the noise of the CPU time itself); it also leaves out any change a config makes "
                    "to the wait of one read, so it is shown beside the elapsed time, "
                    "which answers the question, and only for configs whose encryption runs in the server (not an "
                    "encrypted filesystem's). Where the two intervals do not overlap, trust the elapsed time.")


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def schedule_text(manifest: dict[str, Any], note: str = "") -> str:
    """How trials were ordered (block or query schedule) and what one paired observation is; ``note``: what the
    workload says of its steps under the query schedule (its presentation's ``query_schedule`` note)."""
    plan, entry = _dict(manifest.get("plan")), _dict(manifest.get("schedule"))
    name = entry.get("effective") or plan.get("schedule") or "block"
    if name in ("duet", "turns"):
        return duet_text(manifest)
    if name != "query":
        fallback = f" ({entry['note']})" if entry.get("note") else ""
        return ("Block schedule: in each block every config ran one whole trial, in the block's random order "
                f"(below); one block gives one paired observation per config{fallback}.")
    if entry.get("rounds_per_step"):  # the interleaved OLTP schedule: slices, paired per round
        slice_s, rounds = entry.get("slice_s"), entry.get("rounds_per_step")
        return ("Query schedule: every twin's server stayed up, and inside each block every step ran in rounds: "
                f"{rounds} rounds per step, each a slice of {slice_s} s on every config in a fresh random order "
                "(recorded in manifest.json, schedule.orders), after a ramp-up. Each config recorded one value per "
                "slice; pairing unit: the round, and the block is the independent unit of every interval."
                + (f" {note}" if note else ""))
    repeat = int(entry.get("repeat") or plan.get("repeat") or 1)
    runs = f"{repeat} rounds, each running it" if repeat > 1 else "it ran"
    return ("Query schedule: every twin's server stayed up, and inside each block the workload ran step by step: "
            f"for each step in turn, {runs} once on every config in a fresh random order (recorded in "
            "manifest.json, schedule.orders) before the next step. Pairing unit: the block; each config recorded "
            "one value per step and block" + (f" (the mean of its {repeat} runs)" if repeat > 1 else "") + "."
            + (f" {note}" if note else ""))


def stopping_text(rs: RunSummary) -> str | None:
    """The stopping rule of a --precision run, and what ended the run."""
    rule = rs.analysis.settings.sequential
    if rule is None:
        return None
    entry = _dict(rs.manifest.get("precision"))
    stopped = entry.get("stopped_by") or "the run ending"
    blocks = rs.manifest.get("blocks_run")
    limit = entry.get("max_time_s")
    tail = (f" This run stopped by {stopped}" + (f" after {blocks} blocks" if blocks else "")
            + (f" (time limit {float(limit) / 60:g} min from the start, data and load included)" if limit else "")
            + "; the headline overhead rows carry this interval (ci_method "
            f"seq-{rule.rule} in overhead.csv).")
    return rule.describe() + tail


def _noise_line(summary: NoiseSummary) -> str:
    med = summary.medians
    parts = [f"steal time {med['steal_pct']:.2f}%" if "steal_pct" in med else "",
             f"other tenants {med['foreign_cores']:.2f} cores" if "foreign_cores" in med else "",
             f"highest 1-minute load {summary.max_load1:.2f}" if summary.max_load1 is not None else "",
             f"CPU frequency changed in {summary.frequency_changes} trials"]
    return (f"Machine state over the {summary.trials} measured trials (manifest.json, conditions): typical "
            + ", ".join(p for p in parts if p) + f"; {len(summary.spikes)} trials flagged as run during a noise "
            "spike (steal or other tenants' CPU above median + max(floor, 4·1.4826·MAD), or a frequency change); "
            "flagged trials are kept in every statistic.")


def restarts_text(manifest: dict[str, Any]) -> str:
    """Whether the twins' servers were restarted before every block (--restart-twins), and what it took."""
    entry = _dict(manifest.get("restarts"))
    if not entry:
        return ""
    stopped, cold = _dict(entry.get("stopped")), _dict(entry.get("cold"))
    tail = (f" Restarts stopped before block {stopped.get('before_block')}: {stopped.get('reason')}."
            if stopped else "")
    tail += (f" From block {cold.get('from_block')} on the servers restarted with an empty cache "
             f"({cold.get('reason')}): a cache holding part of an index cannot be given back as it was, so every "
             "twin started each block from the same cold state, and the server processes were still drawn afresh."
             if cold else "")
    blocks = [b for b in _dict(entry.get("blocks")).values() if isinstance(b, dict)]
    if not entry.get("every_block") or not blocks:
        reason = str(entry.get("reason", "off"))
        if "cannot restart" in reason:  # embedded engines: no server process to speak of
            return f"Server restarts: none ({reason})." + tail
        return (f"Server restarts: none ({reason}); each twin's server processes ran the whole run, so a "
                "difference between those processes (docs/precision.md) is part of every comparison." + tail)
    per = [c for b in blocks for c in b.values() if isinstance(c, dict)]
    seconds = statistics.median(float(b.get("seconds", 0)) for b in blocks)
    loaded = sum(int(c.get("pages_loaded", 0)) for c in per)
    cached = sum(int(c.get("pages_cached", 0)) for c in per)
    if any("page_cache_refilled_bytes" in c for c in per):
        tail = (" Before the servers got their cached pages back, the OS page cache's copy of every twin's data "
                "files was dropped and read back in, every twin's in turn, so that the memory serving the misses "
                "(--page-source memory) was drawn afresh in every block and alike for every twin." + tail)
    return (f"Server restarts (--restart-twins, {entry.get('reason', '')}): every server was restarted before each "
            f"of the {len(blocks)} measured blocks and got its cached pages back before the block started "
            f"({loaded:,} of {cached:,} pages over all restarts; median {seconds:.1f} s per "
            "block, quiet wait included), so the difference between two server processes is drawn afresh in "
            "every block and is part of the interval instead of a bias of the whole run." + tail)


def machine_text(manifest: dict[str, Any]) -> list[str]:
    """Settling, pinning and the machine's state during the trials."""
    out = []
    settle = _dict(manifest.get("settle"))
    configs = _dict(settle.get("configs"))
    if configs:
        waits = ", ".join(
            f"{label} {float(c.get('waited_s', 0)) + float(c.get('quiet_waited_s', 0)):.0f} s"
            + (f" (left at {c['server_cores']:.2f} cores)" if isinstance(c.get("server_cores"), (int, float)) else "")
            for label, c in configs.items() if isinstance(c, dict))
        out.append("Before the first block each instance's own background work had to finish (e.g. MariaDB's "
                   "encryption threads) and every server had to go quiet (under 0.05 cores over 2 s, at most "
                   f"60 s): waited {waits}.")
    pin = _dict(settle.get("pin"))
    if pin:
        disk = _dict(pin.get("disk_interrupts"))
        servers = pin.get("servers") if isinstance(pin.get("servers"), list) else []
        where = (f", where {disk.get('device')}'s interrupts go: a read completes on the CPU its server waits on"
                 if disk and set(disk.get("cpus") or [None]) <= set(servers) else "")
        out.append(f"Pinned ({pin.get('reason') or '--pin'}): tdebench on CPU {pin.get('client')}, the servers "
                   f"on CPU {pin.get('servers')}{where}.")
    nice = _dict(settle.get("nice"))
    if nice:
        out.append(f"Priority (--nice): tdebench and the servers ran at nice {nice.get('value')}.")
    restarts = restarts_text(manifest)
    if restarts:
        out.append(restarts)
    summary = summarize_noise(manifest.get("conditions") or [])
    if summary is not None:
        out.append(_noise_line(summary))
        out += [f"Flagged: block {s.block} {s.config}: {', '.join(s.reasons)}." for s in summary.spikes[:20]]
    return out


def methods_paragraphs(rs: RunSummary) -> list[str]:
    """Every paragraph of this module, in the order the Methods section shows them."""
    stop = stopping_text(rs)
    series = rs.analysis.measurements.series
    probed = any(k.metric == "server_cpu" and k.test != "resources" for k in series)
    waits = any(k.metric == COMMON_WAIT for k in series)
    return [schedule_text(rs.manifest, rs.presentation.notes.get("query_schedule", "")), *([stop] if stop else []),
            *([CPU_TEXT] if probed else []), *([COMMON_WAIT_TEXT] if waits else []), *machine_text(rs.manifest)]

"""The ``encrypt`` workload's switching table: per config and switch (the restart a key plugin needs, on,
re-keying, the way back), how the engine did it (online while serving, or offline with the service stopped), the
time to done, the time the service was down, the extra disk, what the background felt meanwhile and after against
the steady phase just before (paired per trial: geometric-mean ratio with a 95% t interval, "not resolved" below 3
trials), and the plaintext the scans found afterwards, in the new place and in an old copy (docs/workloads/encrypt.md).

One model (:func:`tdebench.stats.switching.switch_rows`) and one set of cell texts (:func:`cells`) feed
every view: the terminal, summary.md, index.html and ``report/switching.csv``, so one quantity shows one number
everywhere."""

from __future__ import annotations

from tdebench.report.fmt import DASH, fmt_bytes, fmt_value
from tdebench.report.htmlkit import Col, Safe, join, pill, table, tag
from tdebench.report.mdkit import md_table
from tdebench.stats.caveats import MIN_TRIALS
from tdebench.stats.paired import PairedRatio
from tdebench.stats.switching import ACTIONS, SwitchRow, cycle_settings, switch_rows

__all__ = ["SwitchRow", "switch_rows", "cycle_settings", "cells", "csv_rows", "html_section", "md_lines",
           "ratio_text", "verdict_lines"]

# the scan's verdict beside the time to done: the widest tables scroll, and it must not be the column out of sight
COLUMNS = ("config", "method", "switch", "time to done", "plaintext left in scope", "service down",
           "old plaintext copy", "peak extra disk", "copy rate", "tables: before → UPDATE → VACUUM → VACUUM FULL",
           "TPM just before", "TPM meanwhile ÷ before", "p95 meanwhile ÷ before", "TPM after ÷ before",
           "longest stall meanwhile")
LEFT = COLUMNS.index("plaintext left in scope")
OLD = COLUMNS.index("old plaintext copy")
NUMERIC = set(COLUMNS[3:]) - {COLUMNS[LEFT], COLUMNS[OLD]}
#: the two tables every view shows (one would not fit a terminal): (title, the COLUMNS each shows, named first)
TABLES = (("what the switch took", (0, 1, 2, 3, 5, 7, 8, 9, 4, 6)),
          ("what the background felt (÷ the steady phase just before)", (0, 1, 2, 10, 11, 12, 13, 14)))
#: columns of report/switching.csv (full precision; the views format these numbers)
CSV_FIELDS = ("config", "cycle", "threads", "method", "action", "trials", "time_to_done_s", "downtime_s",
              "peak_extra_bytes", "copy_bytes_per_s", "removed_bytes",
              "tables_before_bytes", "tables_after_update_bytes", "tables_after_vacuum_bytes",
              "tables_after_vacuum_full_bytes", "baseline_phase", "tpm_baseline", "ratios_resolved",
              "tpm_during_ratio", "tpm_during_ci95_low", "tpm_during_ci95_high",
              "p95_during_ratio", "p95_during_ci95_low", "p95_during_ci95_high",
              "tpm_after_ratio", "tpm_after_ci95_low", "tpm_after_ci95_high",
              "longest_stall_s", "plaintext_hits_in_scope", "plaintext_hits_outside_scope", "old_copy_hits", "iops")
_SIZES = ("before", "after_update", "after_vacuum", "after_vacuum_full")


def ratio_text(r: PairedRatio | None) -> str:
    """``0.52× [0.40, 0.64]``; below :data:`MIN_TRIALS` trials ``0.80× (not resolved)``, no interval: one over
    two trials is too wide to say anything (t with 1 degree of freedom is 12.7)."""
    if r is None:
        return DASH
    if r.n < MIN_TRIALS:
        return f"{r.mean:.2f}× (not resolved)"
    return f"{r.mean:.2f}×" + (f" [{r.low:.2f}, {r.high:.2f}]" if r.low is not None and r.high is not None else "")


def left_text(row: SwitchRow) -> str:
    if row.left is None:
        return DASH
    text = "none" if row.left == 0 else f"{row.left:,} hits (finding)"
    return text + (f"; {row.outside} outside scope" if row.outside else "")


def old_copy_text(row: SwitchRow) -> str:
    """What the old place held until it was deleted (a switch that copies the data)."""
    if row.old_copy_left is None:
        return DASH
    return "none" if row.old_copy_left == 0 else f"{row.old_copy_left:,} hits (finding)"


def method_text(row: SwitchRow) -> str:
    if row.offline:  # a restart in an online cycle names its cycle (t<K>: K encryption threads)
        return "offline: service stopped" + (f", cycle {row.cycle}" if row.cycle != "offline" else "")
    threads, iops = cycle_settings(row.cycle)
    return f"online, {threads} thread(s)" + (f", iops {iops}" if iops else "")


def cells(row: SwitchRow) -> list[str]:
    """The row's cells as every view shows them (in :data:`COLUMNS` order)."""
    stopped = "stopped" if row.offline and row.background else DASH  # no background: nothing stopped
    return [row.config, method_text(row), ACTIONS[row.action][0], fmt_value(row.seconds, "s"), left_text(row),
            DASH if row.downtime is None else fmt_value(row.downtime, "s"), old_copy_text(row),
            DASH if row.extra_disk is None else fmt_bytes(row.extra_disk),
            DASH if row.copy_rate is None else f"{fmt_bytes(row.copy_rate)}/s",
            " → ".join(fmt_bytes(v) for v in row.tables) if row.tables else DASH,
            fmt_value(row.tpm_before, "tpm"),
            stopped if row.offline else ratio_text(row.tpm),
            stopped if row.offline else ratio_text(row.p95), ratio_text(row.after),
            stopped if row.offline else fmt_value(row.stall, "s")]


def verdict_lines(rows: list[SwitchRow]) -> list[str]:
    """An encrypt run's verdict: per config and cycle, its switch on in the table's own words (no plain twin to
    compare with; the plaintext phases before the switch are the baseline), with the restart it needed."""
    out = []
    for row in rows:
        if row.action == "rotate":
            out.append(f"{row.config}, {method_text(row)}: rotated by key version in {fmt_value(row.seconds, 's')}"
                       + (f", TPM meanwhile {ratio_text(row.tpm)} of just before, p95 {ratio_text(row.p95)}"
                          if row.tpm is not None else "") + (f"; {row.retired}" if row.retired else ""))
        if row.action != "on":
            continue
        restart = next((r for r in rows if (r.config, r.cycle, r.action) == (row.config, row.cycle, "restart_on")),
                       None)
        text = f"{row.config}, {method_text(row)}: switched on in {fmt_value(row.seconds, 's')}"
        text += f" (median of {row.trials} trial{'s' if row.trials != 1 else ''})"
        if row.offline and row.background:
            text += f", the service down {fmt_value(row.downtime or row.seconds, 's')}"
        if restart is not None:
            text += f", after a restart with the service down {fmt_value(restart.downtime, 's')}"
        if row.tpm is not None:
            text += f", TPM meanwhile {ratio_text(row.tpm)} of just before, p95 {ratio_text(row.p95)}"
        text += f"; plaintext left in scope after it: {left_text(row)}"
        if row.old_copy_left is not None:
            text += f"; in the old copy until it was deleted: {old_copy_text(row)}"
        out.append(text + " (Switching)")
    return out


def shown_columns(rows: list[SwitchRow], table_columns: tuple[int, ...] | None = None) -> list[int]:
    """Columns (of one of :data:`TABLES`, or all) with something in them (pgcrypto's table sizes and the disk
    only when measured); the first three (config, method, switch) always."""
    texts = [cells(r) for r in rows]
    chosen = table_columns if table_columns is not None else tuple(range(len(COLUMNS)))
    return [i for n, i in enumerate(chosen) if n < 3 or any(t[i] != DASH for t in texts)]


def csv_rows(rows: list[SwitchRow]) -> list[dict[str, object]]:
    """The table's numbers at full precision, one row per switch (``report/switching.csv``)."""
    out = []
    for r in rows:
        row: dict[str, object] = {
            "config": r.config, "cycle": r.cycle, "threads": cycle_settings(r.cycle)[0],
            "iops": cycle_settings(r.cycle)[1],
            "method": "offline" if r.offline else "online", "action": r.action, "trials": r.trials,
            "time_to_done_s": r.seconds, "downtime_s": r.downtime, "peak_extra_bytes": r.extra_disk,
            "copy_bytes_per_s": r.copy_rate, "removed_bytes": r.removed,
            "baseline_phase": r.baseline_phase, "tpm_baseline": r.tpm_before, "ratios_resolved": r.resolved,
            "longest_stall_s": r.stall, "plaintext_hits_in_scope": r.left, "plaintext_hits_outside_scope": r.outside,
            "old_copy_hits": r.old_copy_left}
        for name, size in zip(_SIZES, r.tables or [None] * 4):
            row[f"tables_{name}_bytes"] = size
        for prefix, ratio in (("tpm_during", r.tpm), ("p95_during", r.p95), ("tpm_after", r.after)):
            row[f"{prefix}_ratio"] = ratio.mean if ratio else None
            row[f"{prefix}_ci95_low"] = ratio.low if ratio else None
            row[f"{prefix}_ci95_high"] = ratio.high if ratio else None
        out.append(row)
    return out


NOTE = ("Time to done: from the engine's own start to its own report that everything is in the target state. "
        "Service down: the time no workload could connect (an offline method from the server's stop to it serving "
        "again; the restart an online switch needs to load or unload its key plugin). "
        "Times, TPM, stalls and scans: the median over trials. Ratios (÷ before), shown as geometric mean "
        "[95% CI]: the phase against the steady phase just before the switch (the plaintext baseline for the switch "
        "on and its restart, the encrypted steady phase for the re-keying and the way back; offline, the last window "
        f"before the method), per trial, then their geometric mean over trials with a 95% t interval on the log "
        f"ratios; below {MIN_TRIALS} trials \"not resolved\" (no interval is shown). Longest stall: the slowest "
        "transaction meanwhile. Offline: the engine cannot switch while serving; the background was stopped for "
        "that time. Peak extra disk: the instance's files sampled every 100 ms (offline methods). Copy rate: the "
        "data directory's bytes over the copy's seconds (a switch into filesystem encryption). Plaintext left: "
        "canaries and known plaintext found by the at-rest scan after the switch (or the re-keying) in files the "
        "spec covers; hits outside the scope (e.g. a redo log the spec leaves plaintext) beside. Old plaintext "
        "copy: what the data directory left in its old place held when scanned, before it was deleted (deleting frees its "
        "blocks without overwriting them: the plaintext stays on the device until they are reused).")


def html_section(rows: list[SwitchRow]) -> Safe:
    parts = [tag("h2", "Switching encryption")]
    for title, columns in TABLES:
        keep = shown_columns(rows, columns)
        body = []
        for r in rows:
            texts: list[object] = list(cells(r))
            if r.left is not None:
                texts[LEFT] = pill(texts[LEFT], "good" if r.left == 0 else "bad")  # type: ignore[arg-type]
            if r.old_copy_left:  # the old copy's plaintext is a finding until it is wiped
                texts[OLD] = pill(texts[OLD], "bad")  # type: ignore[arg-type]
            body.append([texts[i] for i in keep])
        parts += [tag("h3", title), table([Col(COLUMNS[i], COLUMNS[i] in NUMERIC) for i in keep], body)]
    return tag("section", join([*parts, tag("p", NOTE, class_="note")]), id="switching")


def md_lines(rows: list[SwitchRow]) -> list[str]:
    """The same tables in summary.md."""
    out = ["## Switching encryption", ""]
    for title, columns in TABLES:
        keep = shown_columns(rows, columns)
        body = [[cells(r)[i] for i in keep] for r in rows]
        right = {n for n, i in enumerate(keep) if COLUMNS[i] in NUMERIC}
        out += [f"### {title[0].upper()}{title[1:]}", ""] + md_table([COLUMNS[i] for i in keep], body, right) + [""]
    return out + [f"_{NOTE}_", ""]

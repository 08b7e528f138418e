"""The decision page as sections of texts and tables, built once from the model and rendered by every view."""

from __future__ import annotations

from tdebench.decide import cells
from tdebench.decide.cells import Cell, Section, Table
from tdebench.decide.costs import regime_title
from tdebench.decide.model import Decision
from tdebench.decide.protection import attacker_rows
from tdebench.decide.switching import Switching
from tdebench.report.fmt import DASH, fmt_bytes, fmt_value
from tdebench.runner.progress import human_duration


def title(d: Decision) -> str:
    return f"Which encryption at rest for {d.workload or 'this workload'} on {d.engine}?"


def subtitle(d: Decision) -> str:
    r = d.request
    precision = f", precision target ±{r['precision']}" if r.get("precision") else ""
    return (f"{d.engine_version or d.engine} · workload {r.get('workload_dir', '?')} · mechanisms "
            f"{', '.join(m.encryption for m in d.mechanisms)} (and none, the plain twin) · against "
            f"{', '.join(a['name'] for a in r.get('against') or [])} · budget "
            f"{human_duration(float(r.get('budget_s') or 0))}{precision}")


def answer(d: Decision) -> Section:
    """The rule's answer, the rule with its inputs, and every mechanism as the rule sees it."""
    rk = d.ranking
    by = {m.encryption: m for m in d.mechanisms}
    headers = ["rank", "mechanism", "where it encrypts"] + [f"against {a.name}" for a in rk.attackers] + [
        f"cost: {d.figure_label(k)}" for k in d.ranking_keys()] + ["switching it on"]
    rows = []
    for c in rk.candidates:
        row = [Cell(str(c.rank) if c.rank else DASH), Cell(c.encryption), Cell(by[c.encryption].layer)]
        row += [cells.status(v) for v, _ in c.against.values()]
        row += [cells.cost(o) for o in c.costs]
        row.append(Cell(switch_summary(by[c.encryption].switching)))
        rows.append(row)
    right = set(range(3 + len(rk.attackers), 3 + len(rk.attackers) + len(rk.figures)))
    return Section("answer", "The answer", [rk.answer, f"Rule: {rk.rule}"], [Table(headers, rows, right)],
                   note="rank —: not a candidate (it does not stop every attacker asked, or the runs do not show "
                        "it). Cost: the overhead against the plain twin on your workload, 95% interval in "
                        "brackets (percentage points).")


def cost(d: Decision) -> Section:
    """Per regime, every figure of the workload for the plain twin and each mechanism (n in the caption, or in a
    column of its own when the figures' n differ)."""
    tables = []
    for regime in d.regimes:
        rows, counts = [], []
        for i, f in enumerate(d.figures):
            plain = d.plain_costs.get((i, regime))
            what = f.kind if f.weight is None else f"{f.kind} ×{f.weight:g}"
            row = [Cell(f.title), Cell(what), Cell(fmt_value(plain.median_plain, plain.unit) if plain else DASH)]
            row += [cells.cost(m.costs.get((i, regime))) for m in d.mechanisms]
            first = next((m.costs.get((i, regime)) for m in d.mechanisms if m.costs.get((i, regime))), None)
            rows.append(row)
            counts.append(cells.n_text(first))
        headers = ["figure", "what", "plain twin (median)"] + [m.encryption for m in d.mechanisms]
        caption = regime_title(regime)
        if len(set(counts)) == 1:
            caption += f" · {counts[0]}"
        else:
            headers.append("n")
            rows = [row + [Cell(n)] for row, n in zip(rows, counts)]
        tables.append(Table(headers, rows, set(range(2, len(headers))), caption=caption))
        tables += added_table(d, regime)
    paragraphs = []
    if not any(f.kind == "tail" for f in d.figures):
        paragraphs.append("Tail latency: the cost run recorded no latency percentile (it times each statement "
                          "once per block); the statements' own rows show which of them pays.")
    if not d.figures:
        paragraphs.append("No cost figure: the cost run has no results (see Runs).")
    return Section("cost", "What it costs on your workload", paragraphs, tables,
                   note="Overhead of each mechanism against the plain twin, paired by block, as the cost run's "
                        "report/overhead.csv has it: estimate and its 95% interval in percentage points; "
                        "'not resolved' when the interval spans 0 (no difference shown at this n). Headlines "
                        "first, then tail latency, then every statement (query or write, ×its weight in the "
                        "workload's mix); n: the blocks each figure rests on. Time added: the mechanism's time "
                        "minus the plain twin's, per execution for a statement (per weighted mix for a total), "
                        "paired by block: encryption tends to add a nearly fixed time to each commit, so this "
                        "moves less than the percentage when the disk's own commit time changes.")


def added_table(d: Decision, regime: float | None) -> list[Table]:
    """The time each mechanism adds to each timed figure (paired differences), when the cost run has them."""
    rows = []
    for i, f in enumerate(d.figures):
        found = [m.costs.get((i, regime)) for m in d.mechanisms]
        if any(o is not None and o.difference is not None and o.unit == "s" for o in found):
            rows.append([Cell(f.title)] + [cells.added(o) for o in found])
    if not rows:
        return []
    headers = ["figure"] + [m.encryption for m in d.mechanisms]
    return [Table(headers, rows, set(range(1, len(headers))),
                  caption=f"{regime_title(regime)} · time added (mean paired difference, 95% interval)")]


def protection(d: Decision) -> Section:
    """The threat model: attackers × (plain twin and mechanisms), keys, verdict sentences, evidence."""
    items = [d.plain] + [m.protection for m in d.mechanisms]
    selected = {row for a in d.ranking.attackers for row, _ in attacker_rows(items) if a.selects(row)}
    headers = ["attacker", "none"] + [m.encryption for m in d.mechanisms]
    rows = []
    for row_id, name in attacker_rows(items):
        mark = " (asked)" if row_id in selected else ""
        found = [next((r for r in p.rows if r.get("id") == row_id), None) for p in items]
        rows.append([Cell(name + mark)] + [cells.status(str(r["status"]), plain=i == 0) if r else Cell(DASH)
                                           for i, r in enumerate(found)])
    keys = Table(["config", "where its keys live"], [[Cell(p.encryption), Cell("; ".join(p.keys) or (
        "no key" if p.keys_known else "not known"))] for p in items])
    details = [(f"{p.encryption}: evidence per attacker",
                Table(["attacker", "verdict", "evidence or reason"],
                      [[Cell(str(r.get("attacker"))), cells.status(str(r.get("status")), plain=i == 0),
                        Cell(str(r.get("summary", "")))] for r in p.rows])) for i, p in enumerate(items) if p.rows]
    sentences = [p.sentence for p in items if p.sentence]
    skipped = (d.record.plan.get("not_switched") or {}).get("backups")
    if skipped:
        sentences.append(f"Backups not checked: {skipped}.")
    return Section("protection", "What it stops and what it leaks", sentences, [Table(headers, rows), keys],
                   details=details,
                   note="From the cost run's threat model (verification.json; docs/security.md): protected, exposed, "
                        "not applicable or not checked, with the evidence. Backup rows come from the backups run "
                        "when --against names backups. '(asked)': an attacker of --against. Where the keys live: the "
                        "evidence of the row 'copy of the whole disk'.")


def switch_summary(s: Switching) -> str:
    """One phrase per mechanism for the answer's table."""
    if not s.measured:
        return "not measured"
    if s.offline:
        return f"offline: {fmt_value(s.downtime_s, 's')} down" + (
            f", {fmt_bytes(s.extra_disk)} extra disk" if s.extra_disk is not None else "")
    restart = f" + a restart ({fmt_value(s.restart_s, 's')} down)" if s.restart_s is not None else ""
    return f"online: {fmt_value(s.seconds, 's')}{restart}"  # the throughput meanwhile: in "Switching it on"


def switching(d: Decision) -> Section:
    headers = ["mechanism", "method", "time to done", "service down", "throughput meanwhile ÷ before",
               "p95 latency meanwhile ÷ before", "throughput after ÷ before", "peak extra disk", "restart",
               "plaintext left after", "plaintext in the old copy"]
    rows = []
    lines = [f"Your workload's data: {fmt_bytes(d.data_bytes[0])} of {d.data_bytes[1]} (the cost run's plain twin). "
             "A switch rewrites the data it covers: its time and extra disk grow with the data, and the data switched "
             "below is the switching runs'."] if d.data_bytes else []
    for m in d.mechanisms:
        s = m.switching
        if not s.measured:
            lines.append(f"{m.encryption}: not measured: {s.reason}")
            continue
        lines.append(f"{m.encryption}: measured on {s.data or 'its data'}, {s.trials} trial(s) "
                     f"({s.run} run).")
        rows.append([Cell(m.encryption), Cell("offline (service stopped)" if s.offline else "online (serving)"),
                     Cell(fmt_value(s.seconds, "s")), Cell(fmt_value(s.downtime_s, "s")), cells.ratio(s.tpm_during),
                     cells.ratio(s.p95_during), cells.ratio(s.tpm_after),
                     Cell(fmt_bytes(s.extra_disk) if s.extra_disk is not None else DASH),
                     Cell(fmt_value(s.restart_s, "s") if s.restart_s is not None else "not recorded"), _left(s),
                     _hits(s.old_copy_left)])
    keep = [i for i in range(len(headers)) if i < 3 or any(r[i].text != DASH for r in rows)]
    tables = [Table([headers[i] for i in keep], [[r[i] for i in keep] for r in rows],
                    {n for n, i in enumerate(keep) if 2 <= i <= 7})] if rows else []
    return Section("switching", "Switching it on", lines, tables,
                   note="Measured by doing it on a loaded plaintext database (the switching runs, encrypt workload: "
                        "docs/workloads/encrypt.md): time to done and service down are medians over trials (offline "
                        "the service was stopped for the switch; a restart stops it too). Ratios: the phase against the steady phase just before, geometric "
                        "mean over trials [95% interval]; 'not resolved' when it spans 1 or rests on fewer than 3 "
                        "trials; a column is left out when no switch has a figure for it. Restart: what the switch's "
                        "own run recorded. From each run's report/switching.csv.")


def _left(s: Switching) -> Cell:
    return Cell("not scanned", "warn") if s.plaintext_left is None else _hits(s.plaintext_left)


def _hits(n: int | None) -> Cell:
    if n is None:
        return Cell(DASH)
    return Cell("none", "good") if n == 0 else Cell(f"{n} hits", "bad")


def caveats(d: Decision) -> Section:
    bullets = [f"{n.encryption + ': ' if n.encryption else ''}{n.text} ({n.run} run)" for m in d.mechanisms
               for n in m.notes] + [f"{n.text} ({n.run} run)" for n in d.caveats]
    return Section("caveats", f"Caveats the runs found ({len(bullets)})",
                   [] if bullets else ["None: the runs recorded no warning, problem or finding."], bullets=bullets,
                   note="Each from the runs' own files (their reports' warnings, manifests and scans); every run's "
                        "report has the details.")


def runs(d: Decision) -> Section:
    r = d.request
    plan = d.record.plan
    spent = sum(x.seconds or 0 for x in d.runs)
    switching_floor = sum(x.floor_s for x in d.runs if x.role != "cost")
    paragraphs = [
        f"Budget {human_duration(float(r.get('budget_s') or 0))}: lower bound "
        f"{human_duration(float(plan.get('lower_bound_s') or 0))} (the switching trials' fixed phases; loads, "
        f"switches and the cost run come on top). Split: the switching and backup runs first (their phases fix "
        f"at least {human_duration(switching_floor)}), then the cost run with what was left as its --max-time"
        + (f" ({human_duration(float(d.cost_max_time))})" if d.cost_max_time else "")
        + f". Used: {human_duration(spent)} in the runs; the decision's status: {d.record.data.get('status')}."]
    rows = [[Cell(x.name), Cell(x.role), Cell(x.status, "good" if x.status == "completed" else "warn"),
             Cell(human_duration(x.seconds) if x.seconds is not None else DASH),
             Cell(f"{x.name}/report/index.html" if x.present else DASH), Cell(x.note)] for x in d.runs]
    return Section("runs", "Runs and budget", paragraphs,
                   [Table(["run", "role", "status", "took", "its report", "note"], rows, {3})],
                   bullets=[f"{x.name}: {x.command}" for x in d.runs],
                   note="The list gives each run as tdebench run makes it alone (the cost run without the "
                        "--max-time the budget gave it).")


def sections(d: Decision) -> list[Section]:
    return [answer(d), cost(d), protection(d), switching(d), caveats(d), runs(d)]

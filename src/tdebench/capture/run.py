"""One capture: everything that can be refused is checked first (the output directory, the log's format, the
connection, the tables and their types, the statistics and their privileges), then the statements are read and
planned, the data dumped, and the directory written and checked as ``--workload sql`` will read it."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tdebench.capture import catalog, ddl, stats
from tdebench.capture.data import NULL, dump, select_sql
from tdebench.capture.dependent import join_dependent_writes
from tdebench.capture.kinds import KINDS, SourceKind
from tdebench.capture.redact import redact_plan
from tdebench.capture.source import Source, open_source
from tdebench.capture.statements import Group, digest_group, group_logged
from tdebench.capture.steps import InsertedRows, Plan, plan_steps
from tdebench.errors import UsageError
from tdebench.sqltext import serverlog as logs
from tdebench.sqltext.credentials import without_credentials
from tdebench.sqltext.normal import normalize, parse

MANIFEST = "capture.json"


@dataclass
class Options:
    source: str
    out: Path
    log: Path | None = None
    top: int = 20
    max_rows: int | None = None
    tables: list[str] | None = None
    statements: str = "auto"  # auto | statistics | log | none
    redact_literals: bool = False  # the statements' literal values drawn from the captured data


def _check_out(out: Path) -> None:
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise UsageError(f"--out {out}: exists and is not an empty directory",
                         "give a new directory (capture never overwrites)")


def _mode(opts: Options, kind: SourceKind) -> str:
    mode = opts.statements
    if mode == "auto":
        mode = "log" if opts.log else ("statistics" if kind.server else "none")
    if mode == "log" and opts.log is None:
        raise UsageError("--statements log needs --log FILE", "give the log of the capture window with --log")
    if mode == "statistics" and not kind.server:
        raise UsageError("an SQLite file keeps no statement statistics", "give --log FILE, or --statements none")
    return mode


def _own(src: Source, tables: list[catalog.Table]) -> set[str]:
    """Normalized forms of the statements capture itself runs on the tables (a second capture must not take the
    first one's reads for the application's)."""
    out = set()
    for table in tables:
        for sql in (catalog.readable_sql(src, table), select_sql(src, table, None), select_sql(src, table, 10)):
            tree = parse(sql, src.kind.sqlglot)
            if tree is not None:
                out.add(normalize(tree, src.kind.sqlglot))
    return out


def _groups(src: Source, opts: Options, mode: str, tables: list[catalog.Table], facts: dict[str, Any],
            inserted: InsertedRows, skipped: Counter[str]) -> list[Group]:
    """The hot statement groups, ranked and cut to --top; ``inserted`` notes the rows the log's INSERTs add;
    ``skipped`` counts the statements that carry credentials (never parsed, never written) by kind."""
    captured, own = {t.name.lower() for t in tables}, _own(src, tables)
    database = src.database if src.kind.server else None
    from_log: dict[str, Group] | None = None
    if opts.log is not None:
        fmt, stream = logs.stream_log(opts.log, skipped)
        seen = [0]
        from_log = group_logged(inserted.tap(stream), src.kind.sqlglot, captured, database, seen)
        if not seen[0] and not skipped:
            raise logs.no_statements(opts.log, fmt)
        facts["log"] = {"file": opts.log.name, "format": fmt, "statements": seen[0]}
    if mode == "none":
        return []
    if mode == "log":
        ranked = sorted((g for g in (from_log or {}).values() if g.key not in own),
                        key=lambda g: (-g.seconds, -g.count, g.key))
        facts["ranked_by"] = "total time in the log" if any(g.seconds for g in ranked) else "count in the log"
        facts["statements_beyond_top"] = max(0, len(ranked) - opts.top)
        return ranked[:opts.top]
    if from_log is not None:
        known, facts["values_from"] = from_log, "the log (--log)"
    else:
        history, facts["values_from"] = stats.history(src)
        known = group_logged(inserted.tap(without_credentials(history, skipped)), src.kind.sqlglot, captured,
                             src.database)
    groups = []
    for digest in without_credentials(stats.digests(src), skipped):
        group = digest_group(digest.text, digest.calls, digest.seconds, src.kind, captured, known)
        if group is not None and group.key not in own:
            groups.append(group)
    facts["statements_beyond_top"] = max(0, len(groups) - opts.top)
    facts["ranked_by"] = "total time (server statistics)"
    return groups[:opts.top]


def _toml(database: str, family: str, plan: Plan) -> str:
    weights = "".join(f"{s.name} = {max(1, s.weight)}\n" for s in plan.steps)
    return (f"# Captured by tdebench capture (see {MANIFEST}). Weights: each statement's call count.\n"
            f'database = "{database}"\ndialect = "{family}"\n\n[data]\nnull = "\\\\N"\n\n[weights]\n{weights}'
            + ("\n[writes]\nrestore = \"undo\"\n" if any(s.kind == "write" for s in plan.steps) else ""))


def _write_steps(out: Path, plan: Plan, redacted: bool) -> None:
    values = "; its values drawn from the captured data" if redacted else ""
    for step in plan.steps:
        folder = out / ("queries" if step.kind == "query" else "writes")
        folder.mkdir(exist_ok=True)
        calls = f"{step.group.count} call{'s' if step.group.count != 1 else ''}"
        head = f"-- {calls}, {step.group.seconds:.6f} s in all (captured{values})\n" + "".join(
            f"-- then the INSERT into {sorted(j.group.tables)[0]} that needs its rows ({j.group.count} calls, "
            f"{j.group.seconds:.6f} s in all)\n" for j in step.joined)
        (folder / f"{step.name}.sql").write_text(head + step.sql.strip() + "\n", encoding="utf-8")
        if step.undo:
            (folder / f"{step.name}.undo.sql").write_text("-- deletes the rows the write adds\n" + step.undo + "\n",
                                                          encoding="utf-8")


def capture(opts: Options, say: Callable[[str], None]) -> dict[str, Any]:
    """Write the workload directory; returns the capture manifest."""
    _check_out(opts.out)
    if opts.log is not None:
        logs.detect(opts.log)
    if opts.top < 1 or (opts.max_rows is not None and opts.max_rows < 1):
        raise UsageError("--top and --max-rows must be at least 1", "give a positive number")
    src = open_source(opts.source)
    try:
        mode = _mode(opts, src.kind)
        tables = catalog.read_catalog(src, opts.tables)
        catalog.check_readable(src, tables)
        if mode == "statistics":
            stats.check(src)
        return _capture(src, opts, mode, tables, say)
    finally:
        src.close()


def _capture(src: Source, opts: Options, mode: str, tables: list[catalog.Table],
             say: Callable[[str], None]) -> dict[str, Any]:
    facts: dict[str, Any] = {"source": src.description, "statements_from": mode,
                             "captured_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    inserted = InsertedRows(tables, src.kind.sqlglot)
    skipped: Counter[str] = Counter()
    groups = _groups(src, opts, mode, tables, facts, inserted, skipped)
    facts["credential_statements_skipped"] = dict(sorted(skipped.items()))
    if skipped:
        say(f"capture: left out {sum(skipped.values())} statement(s) that carry a password or a key ("
            + ", ".join(f"{n} {kind}" for kind, n in sorted(skipped.items())) + "); never written anywhere")
    plan = plan_steps(groups, tables, src.kind.sqlglot)
    for table, keys in inserted.keys.items():  # every INSERT of the window, not only those kept as writes
        plan.excluded.setdefault(table, set()).update(keys)
    out = opts.out
    (out / "data").mkdir(parents=True, exist_ok=True)
    try:
        dumped = []
        for table in tables:
            say(f"capture: {table.name}")
            dumped.append(dump(src, table, out / "data", opts.max_rows, plan.excluded.get(table.name, set())))
        cut = any(d.cut for d in dumped)
        if opts.redact_literals:
            redact_plan(plan, tables, out / "data", src.kind.sqlglot)
        join_dependent_writes(plan, tables, inserted.keys, src.kind.sqlglot, samples=not opts.redact_literals)
        facts["literals"] = "drawn from the captured data (--redact-literals)" if opts.redact_literals else \
            "as the application sent them"
        family = src.kind.family
        header = f"-- Captured by tdebench capture from {src.description}, in {family} SQL.\n"
        (out / "schema.sql").write_text(ddl.schema_text(tables, not cut, family, header), encoding="utf-8")
        for other in (k.family for k in KINDS if k.family != family):
            (out / f"schema.{other}.sql").write_text(
                ddl.schema_text(tables, not cut, other, f"-- schema.sql as {other} runs it (generated by capture; "
                                "edit both or delete this variant).\n"), encoding="utf-8")
        _write_steps(out, plan, opts.redact_literals)
        database = "".join(ch if ch.isalnum() or ch == "_" else "_" for ch in src.database.lower()) or "captured"
        (out / "workload.toml").write_text(_toml(database if database[0].isalpha() else f"w_{database}",
                                                 family, plan), encoding="utf-8")
        facts.update(_manifest(dumped, plan, cut))
        (out / MANIFEST).write_text(json.dumps(facts, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    except BaseException:
        shutil.rmtree(out, ignore_errors=True)
        raise
    return facts


def _manifest(dumped: list[Any], plan: Plan, cut: bool) -> dict[str, Any]:
    left_out = list(plan.left_out)
    if cut:
        left_out.append({"statement": "(schema)", "reason": "foreign keys: --max-rows cut a table, so keys may "
                         "point to rows not captured; the schema declares none"})
    return {
        "tables": {d.table: {"rows": d.rows, "bytes": d.bytes, "cut_by_max_rows": d.cut,
                             "rows_left_out_for_writes": d.skipped} for d in dumped},
        "data_bytes": sum(d.bytes for d in dumped),
        "null": NULL,
        "steps": [{"name": s.name, "kind": s.kind, "calls": s.group.count, "seconds": round(s.group.seconds, 6),
                   "sessions": len(s.group.sessions),
                   **({"joined": [{"table": sorted(j.group.tables)[0], "calls": j.group.count,
                                   "seconds": round(j.group.seconds, 6)} for j in s.joined]} if s.joined else {})}
                  for s in plan.steps],
        "left_out": left_out,
    }

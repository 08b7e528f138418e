"""Before any data is loaded: every statement of the workload, as the instance will run it, planned by the
real server against the empty schema (``EXPLAIN``), so that SQL an engine cannot run is refused in one line
(file, engine, fix) before the load rather than found failing in the trials.

The schema is created here (the load then only fills it). Statements on views are left to validation: views
are created after the load, with the indexes. Statements other than SELECT/INSERT/UPDATE/DELETE cannot be
planned and are left to validation too.
"""

from __future__ import annotations

from tdebench.api.trial import ConfigState
from tdebench.encryption import redact
from tdebench.errors import UsageError
from tdebench.sqltext.statements import parse_statements, tables_used
from tdebench.sqltext.transpile import transpile
from tdebench.sqltext.tree import exp
from tdebench.workloads.sql.layout import SqlFile, WorkloadDir, display, variant_name
from tdebench.workloads.sql.steps import rollback

_PLANNED = (exp.Query, exp.Insert, exp.Update, exp.Delete)


def _first_line(exc: BaseException) -> str:
    text = redact(str(exc)).strip()
    return (text.splitlines()[0] if text else type(exc).__name__)[:300]


def _refusal(wd: WorkloadDir, file: SqlFile, state: ConfigState, exc: BaseException) -> UsageError:
    family = state.dialect.family
    path = file.path(family)
    what = "cannot create it" if file is wd.schema else "cannot run it"
    fix = (f"correct {path.name} for {state.dialect.product}" if path != file.canonical else
           f"write the {family} text as a variant, {variant_name(file.canonical, family)} (see docs/workloads/sql.md)")
    return UsageError(f"{display(path)}: {state.dialect.product} ({state.label}) {what}: {_first_line(exc)}", fix)


def _files(wd: WorkloadDir) -> list[SqlFile]:
    return [f for s in wd.steps for f in (s.sql, s.undo) if f is not None]


def _plannable(wd: WorkloadDir, text: str, family: str) -> bool:
    tree = parse_statements(text, family)[0].tree
    return isinstance(tree, _PLANNED) and not (tables_used(tree) & {v.lower() for v in wd.info.views})


def prove(wd: WorkloadDir, state: ConfigState) -> None:
    """Create the schema on the started, empty instance and have it plan every statement; UsageError naming the
    file, the engine and the fix (a variant file) for the first it refuses."""
    dialect, instance = state.dialect, state.instance
    family = dialect.family
    conn = instance.connect()
    try:
        try:
            instance.create_schema(conn, wd.schema_for(family).create, wd.tables)
        except Exception as exc:  # noqa: BLE001 - any driver's error: refused with its first line
            rollback(conn, dialect)
            raise _refusal(wd, wd.schema, state, exc) from None
        if dialect.explain_prefix is None or (dialect.translated and not dialect.target):
            return
        cur = conn.cursor()
        for file in _files(wd):
            for text in wd.statements(file, family):
                if not _plannable(wd, text, family):
                    continue
                try:
                    server_text = transpile(text, dialect.target, pretty=False) if dialect.translated else text
                    cur.execute(dialect.explain_prefix + server_text)
                    cur.fetchall()
                except Exception as exc:  # noqa: BLE001
                    rollback(conn, dialect)
                    raise _refusal(wd, file, state, exc) from None
        conn.commit()
    finally:
        conn.close()

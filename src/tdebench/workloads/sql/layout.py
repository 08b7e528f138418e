"""A user's workload directory, read and checked before any work (docs/workloads/sql.md)::

    schema.sql  [schema.<family>.sql]        CREATE TABLE ... (+ indexes, constraints: run after the load)
    data/<table>.csv | data/<table>.tsv      one per table, header row (or a generate command)
    queries/<name>.sql [<name>.<family>.sql] one statement returning rows each: one timed step
    writes/<name>.sql  [writes/<name>.undo.sql, <name>[.undo].<family>.sql]   timed steps that change data
    workload.toml                            optional settings (:mod:`tdebench.workloads.sql.settings`)

``<family>`` is ``sqlite``, ``mariadb`` or ``postgres``: an instance runs the variant of its family, else the
canonical file. Every problem is a :class:`DirProblem` naming the file and the fix.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from tdebench.api.dialect import FAMILIES
from tdebench.api.tables import TableSpec
from tdebench.sqltext.statements import SqlSyntaxError, is_query, parse_statements, tables_used, tables_written
from tdebench.workloads.sql import csvdata, portable
from tdebench.workloads.sql.schema import SchemaInfo, SchemaProblem, read_schema
from tdebench.workloads.sql.settings import NAME, WorkloadSettings, read_settings

_STEP = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_-]{0,62}$")
_IGNORED = re.compile(r"^(\.|README|readme)")
#: step names the workload records its totals under (test sql): a statement may not take them
RESERVED = ("reads", "writes", "total")


class DirProblem(ValueError):
    """One problem with one file of the directory."""

    def __init__(self, file: Path, problem: str, fix: str) -> None:
        super().__init__(f"{display(file)}: {problem}")
        self.file, self.problem, self.fix = file, problem, fix


def display(path: Path) -> str:
    """``path`` relative to the current directory when it is below it (as the user typed it), else absolute."""
    try:
        return os.path.relpath(path) if Path.cwd() in path.parents else str(path)
    except (OSError, ValueError):
        return str(path)


@dataclass
class SqlFile:
    """One piece of SQL: the canonical file and its per-family variants."""

    canonical: Path
    variants: dict[str, Path] = field(default_factory=dict)

    def path(self, family: str) -> Path:
        return self.variants.get(family, self.canonical)


@dataclass
class Step:
    """A timed step: a query (one statement returning rows) or a write (statements, and their undo)."""

    name: str
    kind: str  # "query" or "write"
    sql: SqlFile
    undo: SqlFile | None = None
    weight: float = 1.0
    writes_to: set[str] = field(default_factory=set)


@dataclass
class WorkloadDir:
    """Everything the directory holds, checked."""

    root: Path
    settings: WorkloadSettings
    database: str
    schema: SqlFile
    info: SchemaInfo
    steps: list[Step]
    data: dict[str, csvdata.DataFile]
    _statements: dict[tuple[str, str], list[str]] = field(default_factory=dict, repr=False)

    @property
    def tables(self) -> tuple[TableSpec, ...]:
        return tuple(self.info.tables)

    def statements(self, file: SqlFile, family: str) -> list[str]:
        """The statements ``family`` runs for ``file``: its variant's, else the canonical ones rewritten for the
        family (already checked; read once)."""
        path = file.path(family)
        key = (str(path), family)
        if key not in self._statements:
            if family in file.variants:
                self._statements[key] = [s.text for s in parse_statements(path.read_text(encoding="utf-8"), family)]
            else:
                self._statements[key] = portable.read_translated(path, self.settings.dialect, family,
                                                                 portable.date_columns(self.info.tables))
        return self._statements[key]

    def schema_for(self, family: str) -> SchemaInfo:
        """The schema ``family`` creates (its variant's statements, else the canonical ones rewritten; tables as
        in the canonical file)."""
        if family not in self.schema.variants and family == self.settings.dialect:
            return self.info
        return read_schema(parse_statements(";\n".join(self.statements(self.schema, family)), family))

    def sql_text(self) -> str:
        """All the SQL of the directory, for keeping sampled values out of what statements say."""
        files = [self.schema, *(s.sql for s in self.steps), *(s.undo for s in self.steps if s.undo)]
        return "\n".join(p.read_text(encoding="utf-8") for f in files for p in [f.canonical, *f.variants.values()])

    @property
    def missing_data(self) -> list[str]:
        """Tables with no file in data/ (a generate command writes them)."""
        return [t for t in self.info.names if t not in self.data]


# reading ------------------------------------------------------------------------------------------------
def _split_name(path: Path, folder: str) -> tuple[str, str | None]:
    """``q1.mariadb.sql`` -> ("q1", "mariadb"); ``q1.sql`` -> ("q1", None); DirProblem for an unknown suffix."""
    parts = path.name[:-len(".sql")].split(".")
    base, family = parts[0], None
    rest = parts[1:]
    if rest and rest[0] == "undo" and folder == "writes":
        base, rest = f"{base}.undo", rest[1:]
    if rest:
        family = rest[0]
        if len(rest) > 1 or family not in FAMILIES:
            where = f"{folder}/" if folder else ""
            raise DirProblem(path, f"unknown dialect override '{'.'.join(rest)}'",
                             f"name variants {where}<name>.<family>.sql with family one of {', '.join(FAMILIES)} "
                             f"(MySQL and other servers reached by URL get the postgres text, translated)")
    if not _STEP.match(base.removesuffix(".undo")):
        raise DirProblem(path, "is not a usable step name", "use letters, digits, _ and - (at most 63)")
    if base.removesuffix(".undo").lower() in RESERVED:
        raise DirProblem(path, f"has a name tdebench records its own figures under ({', '.join(RESERVED)})",
                         "rename the file, e.g. to q_" + base.removesuffix(".undo") + ".sql")
    return base, family


def _sql_files(folder: Path, what: str) -> dict[str, SqlFile]:
    """name -> SqlFile for every ``.sql`` file in ``folder`` (variants without their canonical file refused)."""
    found: dict[str, dict[str | None, Path]] = {}
    for path in sorted(folder.iterdir()):
        if _IGNORED.match(path.name):
            continue
        if not path.is_file() or path.suffix != ".sql":
            raise DirProblem(path, f"is not a .sql file; {what}/ holds one .sql file per step",
                             f"move it out of {what}/")
        base, family = _split_name(path, what)
        found.setdefault(base, {})[family] = path
    out = {}
    for base, files in found.items():
        if None not in files:
            variant = next(iter(files.values()))
            raise DirProblem(variant, f"is a variant of {what}/{base}.sql, which does not exist",
                             f"add {what}/{base}.sql (the canonical text every other engine runs)")
        out[base] = SqlFile(files.pop(None), {k: v for k, v in files.items() if k})  # type: ignore[misc]
    return out


def _parse(path: Path, family: str) -> list:
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise DirProblem(path, f"is not UTF-8 text ({exc.reason} at byte {exc.start})", "save it as UTF-8") from None
    try:
        statements = parse_statements(text, family)
    except SqlSyntaxError as exc:
        raise DirProblem(path, f"syntax error ({family} SQL) at {exc}",
                         "correct the SQL (or give a variant for that engine family, e.g. "
                         f"{path.stem.split('.')[0]}.{family}.sql)") from None
    if not statements:
        raise DirProblem(path, "holds no SQL statement", "write the statement(s), or delete the file")
    return statements


def _schema(root: Path, settings: WorkloadSettings) -> tuple[SqlFile, SchemaInfo]:
    canonical = root / "schema.sql"
    variants = {}
    for path in sorted(root.glob("schema.*.sql")):
        _, family = _split_name(path, "")
        variants[str(family)] = path
    if not canonical.is_file():
        raise DirProblem(canonical, "is missing", "write schema.sql with the CREATE TABLE statements of your tables "
                         "(see docs/workloads/sql.md)")
    try:
        info = read_schema(_parse(canonical, settings.dialect))
    except SchemaProblem as exc:
        raise DirProblem(canonical, str(exc), "correct schema.sql") from None
    file = SqlFile(canonical, variants)
    for family, path in variants.items():
        _check_schema_variant(file, info, family, path)
    return file, info


def _check_schema_variant(file: SqlFile, info: SchemaInfo, family: str, path: Path) -> None:
    try:
        other = read_schema(_parse(path, family))
    except SchemaProblem as exc:
        raise DirProblem(path, str(exc), f"correct {path.name}") from None
    mine = {t.name: t.column_names for t in info.tables}
    theirs = {t.name: t.column_names for t in other.tables}
    if mine != theirs:
        differ = next((t for t in mine if theirs.get(t) != mine[t]), None) or next(t for t in theirs if t not in mine)
        raise DirProblem(path, f"creates table {differ} differently from schema.sql (tables and columns, in order, "
                         f"must be the same; types may differ)", f"make {path.name} create the tables of schema.sql")


def _check_query(path: Path, family: str, known: set[str]) -> None:
    statements = _parse(path, family)
    if len(statements) != 1:
        raise DirProblem(path, f"holds {len(statements)} statements; a query is one statement",
                         "split it into one file per query (each is a timed step)")
    if not is_query(statements[0].tree):
        raise DirProblem(path, "is not a query returning rows (SELECT ...)",
                         "put statements that change data in writes/ (with an undo)")
    _check_tables(path, statements, known)


def _check_tables(path: Path, statements: list, known: set[str]) -> set[str]:
    used: set[str] = set()
    for statement in statements:
        used |= tables_used(statement.tree)
    unknown = sorted(used - known)
    if unknown:
        raise DirProblem(path, f"uses table {unknown[0]}, which schema.sql does not create",
                         f"correct the name (tables: {', '.join(sorted(known))})")
    return used


def _check_write(path: Path, family: str, known: set[str]) -> set[str]:
    statements = _parse(path, family)
    _check_tables(path, statements, known)
    written: set[str] = set()
    for statement in statements:
        written |= tables_written(statement.tree)
    return written


def _steps(root: Path, settings: WorkloadSettings, known: set[str]) -> list[Step]:
    qdir, wdir = root / "queries", root / "writes"
    if not qdir.is_dir():
        raise DirProblem(qdir, "is missing", "add queries/<name>.sql files, one query (a timed step) each")
    queries = _sql_files(qdir, "queries")
    if not queries:
        raise DirProblem(qdir, "holds no query", "add queries/<name>.sql files, one query (a timed step) each")
    steps = []
    for name, file in sorted(queries.items()):
        for family, path in [(settings.dialect, file.canonical), *file.variants.items()]:
            _check_query(path, family, known)
        steps.append(Step(name, "query", file))
    writes = _sql_files(wdir, "writes") if wdir.is_dir() else {}
    for name in sorted(n for n in writes if n.endswith(".undo")):
        if name.removesuffix(".undo") not in writes:
            raise DirProblem(writes[name].canonical, f"undoes writes/{name.removesuffix('.undo')}.sql, which "
                             f"does not exist", "rename or delete it")
    for name, file in sorted(writes.items()):
        if name.endswith(".undo"):
            continue
        if name in queries:
            raise DirProblem(file.canonical, f"has the name of queries/{name}.sql", "give every step its own name")
        undo = writes.get(f"{name}.undo")
        if undo is None and settings.writes.restore == "undo":
            raise DirProblem(file.canonical, "has no undo", f"add writes/{name}.undo.sql (statements that put the "
                             "data back after the trial), or set [writes] restore = \"snapshot\" in workload.toml and "
                             "run with --reset snapshot")
        written: set[str] = set()
        for family, path in [(settings.dialect, file.canonical), *file.variants.items()]:
            written |= _check_write(path, family, known)
        for family, path in ([(settings.dialect, undo.canonical), *undo.variants.items()] if undo else []):
            written |= _check_write(path, family, known)
        steps.append(Step(name, "write", file, undo, writes_to=written))
    return steps


def _order(steps: list[Step], settings: WorkloadSettings, toml: Path) -> list[Step]:
    names = {s.name: s for s in steps}
    for name in [*settings.weights, *(settings.order or [])]:
        if name not in names:
            raise DirProblem(toml, f"names step '{name}', which is neither in queries/ nor in writes/",
                             f"use one of: {', '.join(names)}")
    for step in steps:
        step.weight = float(settings.weights.get(step.name, 1.0))
    if settings.order is None:
        return steps
    if sorted(settings.order) != sorted(names):
        missing = [n for n in names if n not in settings.order] or ["(a step listed twice)"]
        raise DirProblem(toml, f"order leaves out {missing[0]}", "list every step of queries/ and writes/ once")
    return [names[n] for n in settings.order]


def _data(root: Path, info: SchemaInfo, settings: WorkloadSettings) -> dict[str, csvdata.DataFile]:
    folder = root / "data"
    files: dict[str, csvdata.DataFile] = {}
    if folder.is_dir():
        for path in sorted(folder.iterdir()):
            if _IGNORED.match(path.name) or path.is_dir():
                continue
            table = path.name.rsplit(".", 1)[0].lower()
            if path.suffix.lower() not in (".csv", ".tsv"):
                raise DirProblem(path, "is neither a .csv nor a .tsv file", "convert it to CSV, or move it out of data/")
            if table not in info.names:
                raise DirProblem(path, f"is data for table {table}, which schema.sql does not create",
                                 f"name it after its table ({', '.join(info.names)})")
            if table in files:
                raise DirProblem(path, f"is a second data file for table {table}", "keep one (.csv or .tsv)")
            files[table] = csvdata.DataFile(table, path)
    missing = [t for t in info.names if t not in files]
    if missing and not settings.data.generate:
        raise DirProblem(folder / f"{missing[0]}.csv", f"is missing: table {missing[0]} has no data",
                         "add data/<table>.csv (or .tsv) with a header row, or a [data] generate command in "
                         "workload.toml")
    return files


def check_data(wd: WorkloadDir, files: dict[str, csvdata.DataFile]) -> None:
    """Read every data file through (DirProblem naming file, line and column for a row that does not fit)."""
    specs = {t.name: t for t in wd.tables}
    for table, file in files.items():
        try:
            csvdata.check(file, specs[table], wd.settings.data.null)
        except csvdata.DataProblem as exc:
            raise DirProblem(file.path, str(exc), exc.fix) from None


_CHECKED: dict[tuple[object, ...], WorkloadDir] = {}


def _fingerprint(root: Path) -> tuple[object, ...]:
    """Path, size and mtime of every file below ``root``: a directory read before and unchanged since."""
    files = sorted((str(p), p.stat().st_size, p.stat().st_mtime_ns) for p in root.rglob("*") if p.is_file())
    return (str(root.resolve()), *files)


def load_workload_dir(root: Path, *, read_data: bool = True) -> WorkloadDir:
    """The checked directory; DirProblem naming the first file that is wrong and how to fix it. A directory
    checked before in this process and unchanged since is not read again (plan, run and resume all ask)."""
    key = _fingerprint(root) if read_data and root.is_dir() else None
    if key is not None and key in _CHECKED:
        return _CHECKED[key]
    wd = _load(root, read_data)
    if key is not None:
        _CHECKED[key] = wd
    return wd


def _load(root: Path, read_data: bool) -> WorkloadDir:
    if not root.is_dir():
        raise DirProblem(root, "is not a directory", "give --workload-dir the directory holding schema.sql, data/ "
                         "and queries/ (see docs/workloads/sql.md)")
    toml = root / "workload.toml"
    try:
        settings = read_settings(toml)
    except ValueError as exc:
        raise DirProblem(toml, str(exc), "correct it; see docs/workloads/sql.md for its keys") from None
    database = settings.database or re.sub(r"[^a-z0-9_]", "_", root.resolve().name.lower())
    if not NAME.match(database):
        database = f"w_{database}"[:63]
    schema, info = _schema(root, settings)
    known = set(info.names) | info.views
    steps = _order(_steps(root, settings, known), settings, toml)
    wd = WorkloadDir(root, settings, database, schema, info, steps, _data(root, info, settings))
    if read_data:
        check_data(wd, wd.data)
    return wd


def check_family(wd: WorkloadDir, family: str) -> None:
    """Every canonical file an instance of ``family`` runs can be rewritten into its SQL (variants were checked
    in theirs)."""
    if family == wd.settings.dialect:
        return
    files = [(wd.schema, "schema")] + [(s.sql, s.kind) for s in wd.steps] + \
        [(s.undo, "write") for s in wd.steps if s.undo]
    for file, kind in files:
        if family in file.variants:
            continue
        variant = variant_name(file.canonical, family)
        try:
            if kind == "schema":
                wd.schema_for(family)
            else:
                wd.statements(file, family)
        except (portable.Untranslatable, SqlSyntaxError, SchemaProblem) as exc:
            raise DirProblem(file.canonical, f"cannot be rewritten for {family} ({exc})",
                             f"write the {family} text as a variant, {variant}") from None


def variant_name(canonical: Path, family: str) -> str:
    """``queries/q1.sql`` -> ``queries/q1.mariadb.sql`` (relative to the workload directory)."""
    return f"{canonical.parent.name + '/' if canonical.name != 'schema.sql' else ''}{canonical.stem}.{family}.sql"


def check_restore(wd: WorkloadDir, reset: str) -> None:
    """Writes restored by snapshot need the orchestrator's snapshot reset (``--reset snapshot``)."""
    if wd.settings.writes.restore == "snapshot" and reset != "snapshot" and any(s.kind == "write" for s in wd.steps):
        raise DirProblem(wd.root / "workload.toml", "[writes] restore = \"snapshot\" needs the snapshot reset between "
                         "trials", "run with --reset snapshot (reset = \"snapshot\" in an experiment file), or give "
                         "every write an undo file")

"""The server's own statement statistics, checked before any work: performance_schema statement digests
(MariaDB/MySQL) and pg_stat_statements (PostgreSQL), with the statement history MariaDB/MySQL keep
(``events_statements_history_long``) as a source of literal values. Nothing is switched on here: a setting or a
privilege that is missing is said in one line with the statement a DBA runs (or ``--log``)."""

from __future__ import annotations

from dataclasses import dataclass

from tdebench.capture.kinds import MYSQL, POSTGRES
from tdebench.capture.source import Source
from tdebench.encryption import redact
from tdebench.errors import EnvironmentProblem
from tdebench.sqltext.serverlog import Logged

_OR_LOG = "or capture from a log with --log FILE (docs/workloads/capture.md)"


@dataclass
class Digest:
    text: str
    calls: int
    seconds: float
    digest: str = ""


def _first(exc: BaseException) -> str:
    return redact(str(exc)).splitlines()[0] if str(exc) else type(exc).__name__


def check_mysql(src: Source) -> None:
    """performance_schema on, the digest consumer on, and readable by the capture user."""
    row = src.one("SELECT @@performance_schema")
    if not row or not int(row[0]):
        raise EnvironmentProblem("performance_schema is OFF on the source, so it keeps no statement statistics",
                                 "a DBA sets performance_schema=ON in the server's configuration ([mariadb] or "
                                 f"[mysqld]) and restarts it, {_OR_LOG}")
    try:
        consumer = src.one("SELECT ENABLED FROM performance_schema.setup_consumers WHERE NAME = 'statements_digest'")
        src.one("SELECT 1 FROM performance_schema.events_statements_summary_by_digest LIMIT 1")
    except Exception as exc:  # noqa: BLE001 - the driver's access-denied error
        raise EnvironmentProblem(f"the capture user ({src.user}) cannot read performance_schema: {_first(exc)}",
                                 f"GRANT SELECT ON performance_schema.* TO '{src.user}'@'%' (as the DBA), "
                                 f"{_OR_LOG}") from None
    if consumer is None or consumer[0] != "YES":
        raise EnvironmentProblem("performance_schema's statements_digest consumer is off on the source",
                                 "a DBA runs UPDATE performance_schema.setup_consumers SET ENABLED = 'YES' WHERE NAME "
                                 f"= 'statements_digest' for the capture window, {_OR_LOG}")


def check_postgres(src: Source) -> None:
    """pg_stat_statements installed in the database, loaded, and the texts of other users' statements readable."""
    if src.one("SELECT 1 FROM pg_extension WHERE extname = 'pg_stat_statements'") is None:
        raise EnvironmentProblem(f"pg_stat_statements is not installed in database {src.database} of the source",
                                 "a DBA sets shared_preload_libraries = 'pg_stat_statements' in postgresql.conf, "
                                 f"restarts the server and runs CREATE EXTENSION pg_stat_statements in {src.database}, "
                                 f"{_OR_LOG}")
    try:
        src.one("SELECT count(*) FROM pg_stat_statements")
    except Exception as exc:  # noqa: BLE001
        raise EnvironmentProblem(f"pg_stat_statements cannot be read: {_first(exc)}",
                                 "a DBA adds pg_stat_statements to shared_preload_libraries in postgresql.conf and "
                                 f"restarts the server, {_OR_LOG}") from None
    hidden = src.one("SELECT count(*) FROM pg_stat_statements WHERE query = '<insufficient privilege>'")
    if hidden and hidden[0]:
        raise EnvironmentProblem(f"the capture user ({src.user}) sees {hidden[0]} statements of pg_stat_statements "
                                 "without their text", f"GRANT pg_read_all_stats TO {src.user} (as the DBA), {_OR_LOG}")


_CHECKS = {MYSQL: check_mysql, POSTGRES: check_postgres}
# the digests of the source's database, by total time: (statement, with the database name as its parameter)
_DIGESTS = {
    MYSQL: ("SELECT DIGEST_TEXT, COUNT_STAR, SUM_TIMER_WAIT / 1e12, DIGEST FROM "
            "performance_schema.events_statements_summary_by_digest WHERE SCHEMA_NAME = %s AND DIGEST_TEXT IS NOT "
            "NULL ORDER BY SUM_TIMER_WAIT DESC", True),
    POSTGRES: ("SELECT s.query, s.calls, s.total_exec_time / 1000, s.queryid::text FROM pg_stat_statements s "
               "JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = current_database() "
               "ORDER BY s.total_exec_time DESC", False),
}


def check(src: Source) -> None:
    """The statistics are on and readable (EnvironmentProblem with what a DBA does otherwise)."""
    _CHECKS[src.kind](src)


def digests(src: Source) -> list[Digest]:
    """Every digest of the source's database, by total time (largest first)."""
    sql, with_database = _DIGESTS[src.kind]
    rows = src.all(sql, (src.database,) if with_database else ())
    return [Digest(t, int(c), float(s), d) for t, c, s, d in rows]


def history(src: Source) -> tuple[list[Logged], str]:
    """Statements with their values from the server's own history, and where they came from (or why none)."""
    if not src.kind.history:
        return [], f"{src.kind.product} keeps no statement history with values: give --log for them"
    enabled = {name for (name,) in src.all("SELECT NAME FROM performance_schema.setup_consumers WHERE ENABLED = "
                                            "'YES' AND NAME IN ('events_statements_current', "
                                            "'events_statements_history_long')")}
    if len(enabled) < 2:
        return [], ("the statement history is off (a DBA turns on the consumers events_statements_current and "
                    "events_statements_history_long for the capture window: UPDATE performance_schema.setup_consumers "
                    "SET ENABLED = 'YES' WHERE NAME IN ('events_statements_current', 'events_statements_history_long'))"
                    ", or give --log")
    rows = src.all("SELECT THREAD_ID, SQL_TEXT, TIMER_WAIT / 1e12, CURRENT_SCHEMA FROM "
                   "performance_schema.events_statements_history_long WHERE SQL_TEXT IS NOT NULL")
    return [Logged(str(t), s, float(w or 0), d) for t, s, w, d in rows], "events_statements_history_long"

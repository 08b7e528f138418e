"""What each console client needs in a script: timing on, markers, statement terminators, how to run it.

Markers are printed by the client itself (sqlcmd ``PRINT``, SQL*Plus ``PROMPT``, psql ``\\echo``) or, for the
mysql/mariadb client which cannot print, by a one-row ``SELECT``; the log parsers ignore the timing lines that
belong to a marker. Stream start/end stamps come from the server clock in UTC, so a throughput test's wall
time can be computed across sessions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from tdebench.manual.logscan import Event, scan_mysql, scan_oracle, scan_postgres, scan_tsql


@dataclass(frozen=True)
class Client:
    """How one dialect's console client is driven."""

    dialect: str
    name: str
    prologue: tuple[str, ...]
    epilogue: tuple[str, ...]
    marker_template: str  # {text}
    stamp_template: str  # {prefix}
    batch_end: str  # appended after every statement's ';' line ("" or "GO")
    run_hint: str  # {script} {log}
    timing_note: str
    #: reads the client's log into events
    scanner: Callable[[list[str]], Iterable[Event]]
    #: the encrypted spec the README's import example names
    example_spec: str
    #: what the README says about running this client
    notes: tuple[str, ...] = ()

    def marker(self, text: str) -> str:
        """A line (or batch) that makes the client print ``text`` on a line of the log."""
        return self.marker_template.format(text=text)

    def stamp(self, prefix: str) -> str:
        """A statement printing ``prefix`` followed by the server's current UTC time (ISO 8601)."""
        return self.stamp_template.format(prefix=prefix)

    def statement(self, sql: str) -> str:
        """``sql`` terminated for this client (blank lines removed: SQL*Plus ends a statement at one)."""
        body = "\n".join(line.rstrip() for line in sql.strip().rstrip(";").splitlines() if line.strip())
        text = body + ";"
        return f"{text}\n{self.batch_end}" if self.batch_end else text


_MYSQL_STAMP = ("SELECT CONCAT('{prefix} ', DATE_FORMAT(UTC_TIMESTAMP(6), '%Y-%m-%dT%H:%i:%s.%f')) "
                "AS tdebench;")
_MYSQL_NOTE = ("the client's wall time per statement, measured after the whole result was fetched and before "
               "it was printed ('N rows in set (X sec)', 'Query OK, … (X sec)'; 10 ms resolution)")

_ALL: tuple[Client, ...] = (
    Client(
        dialect="tsql", name="sqlcmd (SQL Server)",
        prologue=("SET NOCOUNT OFF;", "SET STATISTICS TIME ON;", "GO"),
        epilogue=("SET STATISTICS TIME OFF;", "GO"),
        marker_template="PRINT '{text}';\nGO",
        stamp_template="PRINT '{prefix} ' + CONVERT(varchar(33), SYSUTCDATETIME(), 126);\nGO",
        batch_end="GO",
        run_hint="sqlcmd -S <SERVER> -d <DATABASE> -U <USER> -i {script} -o {log}",
        timing_note=("the server's 'SQL Server Execution Times' (elapsed and CPU, ms) of every statement "
                     "between the markers, summed; parse-and-compile times are recorded separately"),
        scanner=scan_tsql, example_spec='tde:aes-256',
        notes=(
            'Authenticate with `-E` (Windows) or `-U <USER>` and the `SQLCMDPASSWORD` environment variable.',
            'Do not pass `-b`: a failing query must not stop the stream (it is imported as `failed`).',
            '`-o` writes the results, the PRINT markers and the STATISTICS TIME messages to the log, in order.',
            'SQL Server shares **tempdb** between all databases of an instance: as soon as one database uses TDE,'
            ' tempdb is encrypted for all of them. Run the plain baseline on its own instance (see `tdebench '
            'tde-setup --engine sqlserver`).',
        ),
    ),
    Client(
        dialect="oracle", name="SQL*Plus (Oracle)",
        prologue=("SET ECHO OFF", "SET DEFINE OFF", "SET SQLBLANKLINES ON", "SET PAGESIZE 50000",
                  "SET LINESIZE 32767", "SET TRIMOUT ON", "SET TRIMSPOOL ON", "SET TAB OFF", "SET FEEDBACK ON",
                  "SET ARRAYSIZE 500", "SET TERMOUT OFF", "WHENEVER SQLERROR CONTINUE", "SPOOL {log}",
                  "SET TIMING ON"),
        epilogue=("SET TIMING OFF", "SPOOL OFF", "EXIT"),
        marker_template="PROMPT {text}",
        stamp_template=("SELECT '{prefix} ' || TO_CHAR(SYS_EXTRACT_UTC(SYSTIMESTAMP), "
                        "'YYYY-MM-DD\"T\"HH24:MI:SS.FF6') AS tdebench FROM dual;"),
        batch_end="",
        run_hint="sqlplus -S -L <USER>@<CONNECT_IDENTIFIER> @{script}    (the script spools to {log} itself)",
        timing_note=("SQL*Plus 'Elapsed: HH:MI:SS.FF' of every statement between the markers, summed: client "
                     "wall time including the fetch (rows are spooled, not shown: TERMOUT OFF)"),
        scanner=scan_oracle, example_spec='tde:aes-256',
        notes=(
            'The script spools its own log (`SPOOL`) and hides the rows on the terminal (`SET TERMOUT OFF`), so '
            'terminal output does not inflate the `Elapsed:` times; run it from the directory where the log '
            'should be written.',
            'FETCH FIRST n ROWS ONLY needs Oracle 12c or later.',
        ),
    ),
    Client(
        dialect="mysql", name="mysql client (MySQL)",
        prologue=(), epilogue=(),
        marker_template="SELECT '{text}' AS tdebench;",
        stamp_template=_MYSQL_STAMP,
        batch_end="",
        run_hint=("mysql -vvv --table --force --unbuffered --show-warnings -h <HOST> -u <USER> -p <DATABASE> "
                  "< {script} > {log} 2>&1"),
        timing_note=_MYSQL_NOTE,
        scanner=scan_mysql, example_spec='tde:aes-256-cbc',
        notes=(
            '`-vvv` makes the batch-mode client print tables and the `N rows in set (X sec)` lines; without it '
            'the log has no times. `--force` keeps going after an error, `--unbuffered` keeps errors (stderr) in '
            'order with the output, `2>&1` puts both in the log.',
            'The interactive alternative: `tee stream00.log` then `source stream00.sql` inside `mysql`.',
            'MySQL InnoDB encrypts with AES-256 only (see `tdebench tde-setup --engine mysql`).',
        ),
    ),
    Client(
        dialect="mariadb", name="mariadb client (MariaDB)",
        prologue=(), epilogue=(),
        marker_template="SELECT '{text}' AS tdebench;",
        stamp_template=_MYSQL_STAMP,
        batch_end="",
        run_hint=("mariadb -vvv --table --force --unbuffered --show-warnings -h <HOST> -u <USER> -p <DATABASE> "
                  "< {script} > {log} 2>&1"),
        timing_note=_MYSQL_NOTE,
        scanner=scan_mysql, example_spec='tde:aes-256-cbc',
        notes=(
            '`-vvv` makes the batch-mode client print tables and the `N rows in set (X sec)` lines; without it '
            'the log has no times. `--force` keeps going after an error, `--unbuffered` keeps errors in order.',
            'These queries are exactly the ones `tdebench run --engine mariadb` runs.',
        ),
    ),
    Client(
        dialect="postgres", name="psql (PostgreSQL)",
        prologue=("\\set ON_ERROR_STOP 0", "\\pset pager off", "\\timing on"),
        epilogue=("\\timing off",),
        marker_template="\\echo {text}",
        stamp_template=("SELECT '{prefix} ' || to_char(clock_timestamp() AT TIME ZONE 'UTC', "
                        "'YYYY-MM-DD\"T\"HH24:MI:SS.US') AS tdebench;"),
        batch_end="",
        run_hint="psql -X -h <HOST> -U <USER> -d <DATABASE> -f {script} > {log} 2>&1",
        timing_note="psql's 'Time: N ms' of every statement between the markers, summed (client wall time)",
        scanner=scan_postgres, example_spec='fs:gocryptfs',
        notes=(
            '`-X` ignores `~/.psqlrc`; the password comes from `PGPASSWORD` or `~/.pgpass`.',
            "These queries are exactly the ones tdebench's PostgreSQL engine runs.",
        ),
    ),
)
CLIENTS: dict[str, Client] = {c.dialect: c for c in _ALL}


def client_for(dialect: str) -> Client:
    """The client of a manual-mode dialect."""
    return CLIENTS[dialect]

"""Regenerate the bundled TPC-H reference answers on a private PostgreSQL (exact NUMERIC arithmetic).

    python benchmarks/make_reference_answers.py            # SF 0.01 -> src/tdebench/workloads/tpch/answers/sf0.01
    python benchmarks/make_reference_answers.py --sf 1 --out sf1-answers   # also checks the SF 1 row counts

Starts ``postgres`` from /usr/lib/postgresql/<n>/bin (or PATH) as an unprivileged user (``--user``, created with
``useradd -r -m`` when run as root and missing) in a temporary directory, listening only on a private Unix
socket; generates the data with ``tpchgen-cli`` (unless ``--data`` names existing ``.tbl`` files), loads it with
COPY, adds keys and indexes, runs the 22 canonical queries with their validation parameters and writes one CSV
per query. The server is stopped and the directory removed on success, error and Ctrl-C.
"""

from __future__ import annotations

import argparse
import glob
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psycopg

REPO = Path(__file__).resolve().parents[1]
try:
    import tdebench  # noqa: F401
except ImportError:
    sys.path.insert(0, str(REPO / "src"))

from tdebench.workloads.tpch.answers import write_answer_csv  # noqa: E402
from tdebench.workloads.tpch.params import QUERY_NUMBERS, render_query  # noqa: E402
from tdebench.workloads.tpch.schema import TABLES, constraint_and_index_sql, create_table_sql  # noqa: E402

SF1_ROW_COUNTS = {1: 4, 2: 100, 3: 10, 4: 5, 5: 5, 6: 1, 7: 4, 8: 2, 9: 175, 10: 20, 11: 1048, 12: 2, 13: 42,
                  14: 1, 15: 1, 16: 18314, 17: 1, 18: 57, 19: 1, 20: 186, 21: 100, 22: 7}


def find_pg_bin() -> Path:
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"), key=lambda p: int(p.split("/")[4]))
    found = candidates[-1] if candidates else shutil.which("postgres")
    if not found:
        sys.exit("postgres not found: install PostgreSQL (e.g. apt-get install postgresql)")
    return Path(found).parent


def ensure_user(name: str) -> pwd.struct_passwd:
    if os.geteuid() != 0:
        return pwd.getpwuid(os.geteuid())
    try:
        return pwd.getpwnam(name)
    except KeyError:
        subprocess.run(["useradd", "-r", "-m", name], check=True)
        return pwd.getpwnam(name)


def as_user(user: pwd.struct_passwd) -> dict:
    if os.geteuid() != 0:
        return {}
    return {"user": user.pw_uid, "group": user.pw_gid, "extra_groups": []}


class PrivatePostgres:
    """A throw-away PostgreSQL cluster in ``root``, reachable only through a socket in ``root/sock``."""

    def __init__(self, root: Path, user: pwd.struct_passwd) -> None:
        self.bin = find_pg_bin()
        self.root, self.user = root, user
        self.data, self.sock = root / "pgdata", root / "sock"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        self.sock.mkdir(mode=0o700)
        os.chown(self.sock, self.user.pw_uid, self.user.pw_gid)
        kw = as_user(self.user) | {"cwd": self.root}
        subprocess.run([self.bin / "initdb", "-D", self.data, "-U", "postgres", "--auth=trust", "--locale=C",
                        "-E", "UTF8"], check=True, stdout=subprocess.DEVNULL, **kw)
        log = open(self.root / "postgres.log", "wb")
        settings = {"listen_addresses": "", "unix_socket_directories": str(self.sock), "fsync": "off",
                    "synchronous_commit": "off", "full_page_writes": "off", "shared_buffers": "512MB",
                    "work_mem": "64MB", "maintenance_work_mem": "512MB", "max_wal_size": "4GB"}
        args = [str(self.bin / "postgres"), "-D", str(self.data)]
        for key, value in settings.items():
            args += ["-c", f"{key}={value}"]
        self.process = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, **kw)
        log.close()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"postgres exited: {(self.root / 'postgres.log').read_text()[-2000:]}")
            try:
                self.connect().close()
                return
            except psycopg.OperationalError:
                time.sleep(0.2)
        raise RuntimeError("postgres did not accept connections within 60 s")

    def connect(self) -> psycopg.Connection:
        return psycopg.connect(host=str(self.sock), user="postgres", dbname="postgres", autocommit=True)

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def generate(sf: float, directory: Path) -> None:
    subprocess.run(["tpchgen-cli", "-s", f"{sf:g}", "--output-dir", str(directory)], check=True)


def copy_table(conn: psycopg.Connection, name: str, path: Path) -> None:
    with conn.cursor() as cur, cur.copy(f"COPY {name} FROM STDIN WITH (FORMAT text, DELIMITER '|')") as copy:
        with path.open("rb") as f:
            while lines := f.readlines(1 << 20):
                copy.write(b"".join(line.rstrip(b"\n").removesuffix(b"|") + b"\n" for line in lines))


def load(conn: psycopg.Connection, data: Path) -> None:
    for statement in create_table_sql("postgres"):
        conn.execute(statement)
    for table in TABLES:
        started = time.perf_counter()
        copy_table(conn, table.name, data / f"{table.name}.tbl")
        print(f"loaded {table.name} in {time.perf_counter() - started:.1f} s", flush=True)
    started = time.perf_counter()
    for statement in constraint_and_index_sql("postgres"):
        conn.execute(statement)
    conn.execute("ANALYZE")
    print(f"keys, indexes and ANALYZE in {time.perf_counter() - started:.1f} s", flush=True)


def run_queries(conn: psycopg.Connection, sf: float, out: Path) -> dict[int, int]:
    counts = {}
    total = 0.0
    for number in QUERY_NUMBERS:
        started = time.perf_counter()
        with conn.cursor() as cur:
            cur.execute(render_query(number, "postgres", sf))
            rows = cur.fetchall()
            columns = [d.name for d in cur.description]
        elapsed = time.perf_counter() - started
        total += elapsed
        write_answer_csv(out / f"q{number:02d}.csv", columns, rows)
        counts[number] = len(rows)
        print(f"q{number:02d}: {len(rows):6d} rows in {elapsed:7.2f} s", flush=True)
    print(f"22 queries in {total:.1f} s")
    return counts


def check_counts(sf: float, counts: dict[int, int]) -> list[str]:
    problems = []
    if sf == 1:
        problems += [f"q{n:02d}: {counts[n]} rows, the spec says {want}" for n, want in SF1_ROW_COUNTS.items()
                     if counts[n] != want]
    if sf == 0.01 and counts[17] != 1:
        problems.append(f"q17: {counts[17]} rows, expected a single NULL")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sf", type=float, default=0.01)
    parser.add_argument("--out", type=Path, help="default: the bundled answers directory for --sf")
    parser.add_argument("--data", type=Path, help="existing directory of .tbl files for --sf")
    parser.add_argument("--user", default="tdebench", help="unprivileged user that runs postgres when root")
    args = parser.parse_args(argv)
    out = args.out or REPO / "src/tdebench/workloads/tpch/answers" / f"sf{args.sf:g}"
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    user = ensure_user(args.user)
    root = Path(tempfile.mkdtemp(prefix="tdebench-ref-"))
    os.chown(root, user.pw_uid, user.pw_gid)
    server = PrivatePostgres(root, user)
    try:
        data = args.data
        if data is None:
            data = root / "data"
            generate(args.sf, data)
        server.start()
        with server.connect() as conn:
            load(conn, data)
            counts = run_queries(conn, args.sf, out)
    finally:
        server.stop()
        shutil.rmtree(root, ignore_errors=True)
    problems = check_counts(args.sf, counts)
    for problem in problems:
        print(problem, file=sys.stderr)
    print(f"answers written to {out}" + ("" if problems else "; row counts check out"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""A captured workload to measure: the orders shop's traffic on a private MariaDB, taken by ``tdebench capture``.

    python benchmarks/captured_orders.py --out orders-captured [--seconds 60] [--seed 1] [--connections 4]

What a DBA with an orders application has, made on this machine in one command:

1. a private MariaDB (tdebench's own engine: a temporary directory, 127.0.0.1 at a free port, generated
   passwords), loaded with docs/examples/orders-sql (schema.sql, data/ and the rows of its generate command, as
   ``tdebench run --workload sql`` loads them);
2. the slow log switched on for the window as docs/workloads/capture.md tells a DBA to (``long_query_time = 0``);
3. the shop's traffic for ``--seconds`` on ``--connections`` connections: the example's queries picked with the
   weights of its workload.toml, each call with other literal values as an application sends them (another
   customer, city, sign-up date, half-year), and its write as the shop makes it: one new order and its lines,
   ``INSERT ... VALUES`` with new keys, in one transaction (the example's ``INSERT ... SELECT`` burst is a
   benchmark's stand-in that capture cannot undo, docs/workloads/capture.md); between two requests a connection
   waits a random think time (exponential, mean ``--think-ms``);
4. ``tdebench capture --from mariadb://capture@127.0.0.1:PORT/orders --log SLOWLOG --out OUT`` as its own
   process, run by an account that may only read the tables, its generated password handed over in
   ``TDEBENCH_PASSWORD_SOURCE`` (never on a command line, never printed);
5. the server stopped and its directory removed, also on an error, Ctrl-C or SIGTERM (after a SIGKILL,
   ``tdebench cleanup`` does it: the server is recorded as tdebench's runs record theirs).

It prints what was captured (statements with their calls, tables with their rows, what was left out), checks
that no password generated here is in any file of OUT, and prints the two runs to make next: an A/A run and the
four-config comparison, each with ``--workload-dir OUT``. It loads the machine for the window: run it where no
measurement runs meanwhile.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from contextlib import contextmanager
import csv
import json
import os
import random
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from tdebench.api.engine import Config  # noqa: E402
from tdebench.encryption import PLAIN, generate_password, issued_secrets, redact  # noqa: E402
from tdebench.engines.mariadb.engine import MariadbEngine, MariadbInstance  # noqa: E402
from tdebench.errors import RunFailed, TdebenchError  # noqa: E402
from tdebench.lifeline import helper_preexec  # noqa: E402
from tdebench.runner.ownership import Ownership  # noqa: E402
from tdebench.workloads.loading import TableLoads, bulk_load_tables  # noqa: E402
from tdebench.workloads.sql import data as sql_data  # noqa: E402
from tdebench.workloads.sql.layout import WorkloadDir, load_workload_dir  # noqa: E402

ORDERS = ROOT / "docs" / "examples" / "orders-sql"
FAMILY = "mariadb"
CAPTURE_USER = "capture"
SOURCE_SETTINGS = {"innodb_buffer_pool_size": "256M", "innodb_log_file_size": "64M"}  # a small source server
FIRST_NEW_ORDER = 1_000_001  # above every generated order id
STREETS = ("Rue de la République", "Hauptstraße", "Rua Augusta", "Grafton Street", "Queen Street West")


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("orders-captured"),
                        help="new (or empty) directory for the captured workload (default: orders-captured)")
    parser.add_argument("--seconds", type=float, default=60.0, help="length of the traffic window (default 60)")
    parser.add_argument("--seed", type=int, default=1, help="seed of the traffic's choices and values (default 1)")
    parser.add_argument("--connections", type=int, default=4, help="the application's connections (default 4)")
    parser.add_argument("--think-ms", type=float, default=5.0,
                        help="mean pause of a connection between two requests, in ms (default 5)")
    args = parser.parse_args(argv)
    out = args.out
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        parser.error(f"--out {out}: exists and is not an empty directory; give a new directory")
    if args.seconds <= 0 or args.connections < 1 or args.think_ms < 0:
        parser.error("--seconds must be > 0, --connections at least 1 and --think-ms at least 0")
    return args


# the shop's requests ---------------------------------------------------------------------------------------
@dataclass
class ShopData:
    """What the application knows of its data: customers (id, city), products (id, price), sign-up dates."""

    customers: list[tuple[int, str]]
    cities: list[str]
    products: list[tuple[int, str]]


def shop_data(wd: WorkloadDir) -> ShopData:
    with open(wd.data["customers"].path, newline="", encoding="utf-8") as handle:
        customers = [(int(r["customer_id"]), r["city"]) for r in csv.DictReader(handle)]
    with open(wd.data["products"].path, newline="", encoding="utf-8") as handle:
        products = [(int(r["product_id"]), r["price"]) for r in csv.DictReader(handle)]
    return ShopData(customers, sorted({city for _, city in customers}), products)


Literal = Callable[[random.Random, ShopData, Any], str]


def _half_year(rng: random.Random, shop: ShopData, conn: Any) -> str:
    start = date(2023, 7 + rng.randrange(6), 1)
    end = date(start.year + (start.month + 5) // 12, (start.month + 5) % 12 + 1, 1)
    return f"o.ordered_at >= '{start.isoformat()}' AND o.ordered_at < '{end.isoformat()}'"


# Per query of the example: its literal text as tdebench runs it on MariaDB -> how the application varies it.
# Queries not named (q3, q4: a report and the pick list) are sent as they are.
VARIED: dict[str, list[tuple[str, Literal]]] = {
    "q1_customer_orders": [("o.customer_id = 42", lambda rng, shop, conn:
                            f"o.customer_id = {rng.choice(shop.customers)[0]}")],
    "q2_top_customers": [("o.ordered_at >= '2024-01-01' AND o.ordered_at < '2024-07-01'", _half_year)],
    "q5_customer_search": [("city = 'Lyon'", lambda rng, shop, conn: f"city = {conn.escape(rng.choice(shop.cities))}"),
                           ("signed_up >= '2021-01-01'", lambda rng, shop, conn:
                            f"signed_up >= '{2019 + rng.randrange(5)}-{1 + rng.randrange(12):02d}-01'")],
}


@dataclass
class Request:
    """One of the shop's requests: a query of the example (its statement and how its literals vary) or the new
    order (``write``)."""

    name: str
    weight: float
    statement: str = ""
    varied: list[tuple[str, Literal]] = field(default_factory=list)
    write: bool = False


def shop_requests(wd: WorkloadDir) -> list[Request]:
    """The example's steps as the application sends them, with workload.toml's weights."""
    out = []
    for step in wd.steps:
        if step.kind == "write":
            out.append(Request(step.name, step.weight, write=True))
            continue
        (statement,) = wd.statements(step.sql, FAMILY)
        varied = VARIED.get(step.name, [])
        for literal, _ in varied:
            if literal not in statement:
                raise SystemExit(f"{step.name}: the example's query no longer says {literal!r}; "
                                 f"update VARIED in {Path(__file__).name}")
        out.append(Request(step.name, step.weight, statement, varied))
    return out


class NewOrders:
    """New order ids, shared by the connections."""

    def __init__(self) -> None:
        self._next = FIRST_NEW_ORDER
        self._lock = threading.Lock()

    def take(self) -> int:
        with self._lock:
            self._next += 1
            return self._next - 1


def new_order(cur: Any, rng: random.Random, shop: ShopData, order_id: int) -> int:
    """One order and its lines, as the shop's checkout writes them (the caller commits); statements sent."""
    customer, city = rng.choice(shop.customers)
    at = datetime(2024, 7, 1) + timedelta(minutes=order_id - FIRST_NEW_ORDER)
    address = f"{rng.randint(1, 250)} {rng.choice(STREETS)}, {city}"
    cur.execute("INSERT INTO orders (order_id, customer_id, ordered_at, status, shipped_on, ship_address) "
                f"VALUES ({order_id}, {customer}, '{at:%Y-%m-%d %H:%M:%S}', 'new', NULL, "
                f"{cur.connection.escape(address)})")
    lines = rng.sample(shop.products, rng.randint(1, 4))
    values = ", ".join(f"({order_id}, {n}, {product}, {rng.randint(1, 4)}, {price})"
                       for n, (product, price) in enumerate(lines, start=1))
    cur.execute(f"INSERT INTO order_lines (order_id, line_no, product_id, quantity, unit_price) VALUES {values}")
    return 2


def send(conn: Any, request: Request, rng: random.Random, shop: ShopData, orders: NewOrders) -> int:
    """One request on ``conn``, committed; the statements it sent."""
    cur = conn.cursor()
    if request.write:
        sent = new_order(cur, rng, shop, orders.take())
    else:
        statement = request.statement
        for literal, draw in request.varied:
            statement = statement.replace(literal, draw(rng, shop, conn))
        cur.execute(statement)
        cur.fetchall()
        sent = 1
    conn.commit()
    return sent


@dataclass
class Traffic:
    """The window's counts: requests per name, statements, and the first error of a connection."""

    requests: Counter[str] = field(default_factory=Counter)
    statements: int = 0
    error: BaseException | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)


def connection_loop(inst: MariadbInstance, requests: list[Request], shop: ShopData, orders: NewOrders,
                    seed: int, deadline: float, think: float, stop: threading.Event, traffic: Traffic) -> None:
    """One connection of the application until ``deadline`` (or ``stop``)."""
    rng = random.Random(seed)
    weights = [r.weight for r in requests]
    try:
        conn = inst.connect()
        try:
            while time.monotonic() < deadline and not stop.is_set():
                request = rng.choices(requests, weights)[0]
                sent = send(conn, request, rng, shop, orders)
                with traffic.lock:
                    traffic.requests[request.name] += 1
                    traffic.statements += sent
                if think:
                    stop.wait(rng.expovariate(1.0 / think))
        finally:
            conn.close()
    except BaseException as exc:  # noqa: BLE001 - handed to the main thread, which stops the others
        with traffic.lock:
            traffic.error = traffic.error or exc
        stop.set()


def play(inst: MariadbInstance, requests: list[Request], shop: ShopData, args: argparse.Namespace) -> Traffic:
    """The shop's traffic for ``args.seconds`` on ``args.connections`` connections."""
    traffic, stop, orders = Traffic(), threading.Event(), NewOrders()
    deadline = time.monotonic() + args.seconds
    threads = [threading.Thread(target=connection_loop, name=f"shop-{i}", daemon=True,
                                args=(inst, requests, shop, orders, args.seed * 1000 + i, deadline,
                                      args.think_ms / 1000.0, stop, traffic))
               for i in range(args.connections)]
    for thread in threads:
        thread.start()
    try:
        for thread in threads:
            while thread.is_alive():
                thread.join(timeout=0.5)  # short waits: Ctrl-C reaches the main thread
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=30)
    if traffic.error is not None:
        raise RunFailed(f"the application's traffic failed: {redact(str(traffic.error))}",
                        "look at the error above; the server's log went with its directory") from traffic.error
    return traffic


# the source server ---------------------------------------------------------------------------------------
def start_source(wd: WorkloadDir, workdir: Path) -> MariadbInstance:
    """A private plain MariaDB on 127.0.0.1 (tdebench's engine), database ``wd.database``."""
    config = Config("mariadb", PLAIN, dict(SOURCE_SETTINGS), tcp=True, name="orders-source")
    inst = MariadbEngine().create_instance(config, workdir, database=wd.database)
    inst.start()
    return inst


def load_orders(inst: MariadbInstance, wd: WorkloadDir) -> int:
    """The example's schema and data, loaded as ``--workload sql`` loads them; rows loaded."""
    converted = sql_data.prepare_data(wd, sql_data.cache_root(None))
    schema = wd.schema_for(FAMILY)
    specs = {t.name: t for t in wd.tables}
    loads = TableLoads()
    conn = inst.connect()
    try:
        inst.create_schema(conn, schema.create, wd.tables)
        bulk_load_tables(inst, conn, [(specs[c.table], [c.path]) for c in converted], loads)
        inst.create_constraints(conn, schema.after_load)
        inst.analyze(conn)
    finally:
        conn.close()
    return loads.rows


def admin(inst: MariadbInstance, *statements: str | tuple[str, tuple[Any, ...]]) -> list[tuple[Any, ...]]:
    """Statements as the instance's administrator; the rows of the last one."""
    conn = inst.connect()
    try:
        cur = conn.cursor()
        rows: list[tuple[Any, ...]] = []
        for statement in statements:
            sql, params = statement if isinstance(statement, tuple) else (statement, ())
            cur.execute(sql, params) if params else cur.execute(sql)
            rows = list(cur.fetchall())
        conn.commit()
        return rows
    finally:
        conn.close()


def capture_account(inst: MariadbInstance, database: str) -> str:
    """An account that may only read the tables (what ``--log`` needs); its generated password. Made before the
    window: its CREATE USER is not in the log."""
    password = generate_password()
    admin(inst, (f"CREATE USER '{CAPTURE_USER}'@'127.0.0.1' IDENTIFIED BY %s", (password,)),
          f"GRANT SELECT ON {database}.* TO '{CAPTURE_USER}'@'127.0.0.1'")
    return password


def slow_log(inst: MariadbInstance, path: Path | None) -> None:
    """The slow log with every statement on (``path``) or off again (None), as a DBA switches it for a window."""
    if path is None:
        admin(inst, "SET GLOBAL slow_query_log = OFF")
        return
    admin(inst, ("SET GLOBAL slow_query_log_file = %s", (str(path),)), "SET GLOBAL long_query_time = 0",
          "SET GLOBAL slow_query_log = ON")


# capture and what it took ----------------------------------------------------------------------------------
def run_capture(url: str, password: str, log: Path, out: Path) -> None:
    """``tdebench capture`` as its own process, the password in its environment only."""
    env = {**os.environ, "TDEBENCH_PASSWORD_SOURCE": password,
           "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT / "src"), os.environ.get("PYTHONPATH")]))}
    argv = [sys.executable, "-m", "tdebench", "capture", "--from", url, "--log", str(log), "--out", str(out)]
    print("$ TDEBENCH_PASSWORD_SOURCE=... " + shlex.join(["tdebench", *argv[3:]]), flush=True)
    done = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, preexec_fn=helper_preexec(), check=False)
    if done.returncode != 0:
        raise RunFailed(f"tdebench capture exited with code {done.returncode}", "its message is above")


def secrets_in(out: Path) -> list[str]:
    """Files of ``out`` that hold a password generated in this process (the source's or the capture
    account's)."""
    secrets = [s.encode() for s in issued_secrets()]
    return [str(p.relative_to(out)) for p in sorted(out.rglob("*"))
            if p.is_file() and any(s in p.read_bytes() for s in secrets)]


def report(out: Path, traffic: Traffic, seconds: float) -> None:
    """What was captured, and the two runs to make next."""
    facts = json.loads((out / "capture.json").read_text(encoding="utf-8"))
    sent = ", ".join(f"{name} {n}" for name, n in sorted(traffic.requests.items()))
    print(f"\ntraffic: {sum(traffic.requests.values())} requests ({traffic.statements} statements) in "
          f"{seconds:.0f} s: {sent}")
    log = facts.get("log", {})
    print(f"captured from the slow log ({log.get('statements', '?')} statements read, ranked by "
          f"{facts.get('ranked_by', '?')}):")
    for step in facts["steps"]:
        joined = "".join(f"; then the INSERT into {j['table']} ({j['calls']} calls, {j['seconds']:.3f} s)"
                         for j in step.get("joined", []))
        print(f"  {step['kind']:5} {step['name']:28} {step['calls']:7} calls  {step['seconds']:9.3f} s  "
              f"{step['sessions']} sessions{joined}")
    for table, info in facts["tables"].items():
        extra = f" ({info['rows_left_out_for_writes']} added in the window left out)" \
            if info.get("rows_left_out_for_writes") else ""
        print(f"  table {table:14} {info['rows']:8} rows{extra}")
    for item in facts.get("left_out", []):
        print(f"  left out: {item.get('reason', '?')}")
    leaked = secrets_in(out)
    if leaked:
        raise RunFailed(f"a generated password is in {', '.join(leaked)} (the directory is removed)",
                        "this is a bug of tdebench capture: report it")
    print(f"no password generated here is in any file of {out}")
    where = shlex.quote(str(out))
    base = f"tdebench run --workload sql --workload-dir {where} --engine mariadb"
    print("\nnext (each heavy: a quiet machine):")
    print(f"  {base} --encryption none,none --precision 2% --max-time 15m")
    print(f"  {base} --encryption none,tde:aes-256-ctr,fs:fscrypt,fs:gocryptfs --precision 2% "
          "--precision-metric reads,writes --max-time 30m")


# the whole ---------------------------------------------------------------------------------------------
def window(inst: MariadbInstance, wd: WorkloadDir, args: argparse.Namespace, log: Path) -> Traffic:
    """The slow log on, the shop's traffic, the slow log off."""
    requests, shop = shop_requests(wd), shop_data(wd)
    slow_log(inst, log)
    try:
        print(f"playing the shop's traffic for {args.seconds:g} s on {args.connections} connections", flush=True)
        return play(inst, requests, shop, args)
    finally:
        slow_log(inst, None)


@contextmanager
def source_server(wd: WorkloadDir, run_id: str, run_dir: Path) -> Iterator[MariadbInstance]:
    """A private plain MariaDB loaded with ``wd``, stopped and removed at the end, also on an error, Ctrl-C or
    SIGTERM; recorded as tdebench's runs record theirs, so that ``tdebench cleanup`` removes it after a SIGKILL."""
    workdir = Path(tempfile.mkdtemp(prefix=f"tdebench-{run_id}-"))
    workdir.chmod(0o711)  # the service user reaches its instance directory
    ownership = Ownership(run_id, run_dir, keep=False, on_problem=print)
    ownership.add_dir(workdir)
    inst: MariadbInstance | None = None
    try:
        inst = start_source(wd, workdir)
        t0 = time.monotonic()
        rows = load_orders(inst, wd)
        print(f"loaded {rows} rows of {wd.root.name} into a private MariaDB in {time.monotonic() - t0:.1f} s",
              flush=True)
        yield inst
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # a second signal must not cut the clean-up short
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            if inst is not None:
                inst.destroy()
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
            ownership.close()


def capture_orders(args: argparse.Namespace, out: Path) -> tuple[Traffic, float]:
    """The source server started, loaded, played and captured into ``out``, then stopped and removed; the
    traffic and how long it played."""
    wd = load_workload_dir(ORDERS)
    with source_server(wd, "captured-orders", out) as inst:
        password = capture_account(inst, wd.database)
        port = int(admin(inst, "SELECT @@port")[0][0])
        log = inst.log_path.with_name("capture-slow.log")
        t0 = time.monotonic()
        traffic = window(inst, wd, args, log)
        played = time.monotonic() - t0
        run_capture(f"mariadb://{CAPTURE_USER}@127.0.0.1:{port}/{wd.database}", password, log, out)
        return traffic, played


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    out = args.out.absolute()
    existed = out.is_dir()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # cleaned up as after Ctrl-C
    try:
        report(out, *capture_orders(args, out))
    except BaseException as exc:
        shutil.rmtree(out, ignore_errors=True)  # nothing half-written (or holding a password) is left
        if existed:
            out.mkdir()
        if isinstance(exc, TdebenchError):
            print(f"{Path(__file__).name}: {exc.one_line()}", file=sys.stderr)
            return exc.exit_code
        raise
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Every registered engine x every registered workload, at the workload's smallest options, through the real CLI
(``tdebench run``, in-process, one trial, no warm-up).

A pair runs to the end (exit 0, manifest completed, every verification passed) and its run directory holds only
files and CSV columns that docs/result-format.md lists (tests/resultdoc.py). A pair that the workload's declared
needs rule out (``Workload.needs``, the one place that says so) is refused by the CLI before any work: exit 2, one
line naming the reason, no run directory. A new engine or workload is in the matrix as soon as it is registered;
one that breaks a pair fails here. An engine tdebench provisions has one class per pair (each run starts its own
server: under pytest-xdist the pairs of even one engine spread over the workers); a remote engine has one class,
whose pairs share its private server.

How each engine runs:

* engines tdebench provisions: one plain config (``--encryption none``), no report, no restarts between blocks,
  the kit's small server settings (tests/engines/kit.py); provisioning is most of each pair's cost;
* remote engines (``external``): one private MariaDB server with TDE per class (tdebench's own engine, TCP on
  127.0.0.1, generated password), reached by every run as ``--target`` declared ``tde:aes-256-cbc``, each run in a
  process of its own;
* engines not available here (``mysql`` without a MySQL mysqld): their runs are skipped with the reason; their
  refusals are still checked (they need no server).

Pairs that an end-to-end test already runs through the CLI (``COVERED_ELSEWHERE``; all of SQLite's, as a user's
first try with twins and report) are left to it; each of those checks its run directory against the docs too.
One three-config run adds ``report/anova.csv`` to what the docs check sees.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tdebench.cli.app import main
from tdebench.encryption import parse_spec
from tdebench.engines import Config, engine_names, get_engine
from tdebench.errors import EnvironmentProblem
from tdebench.workloads import unmet_need, workload_names
from tdebench.workloads.backup.workload import engine_kinds
from tests.engines import kit
from tests.resultdoc import undocumented
from tests.sqlworkload import make_workload_dir
from tests.unit.test_workload_kit import REPLAY_LOG

ROOT = Path(__file__).resolve().parents[2]
# the smallest options of each workload (a new workload adds its entry; "{shop}" is a tiny sql workload directory,
# "{log}" a PostgreSQL log of two sessions on it, "{kind}" the first backup kind of the engine's backup tools,
# "{encrypted}" the engine's default encrypted spec)
SMALLEST: dict[str, list[str]] = {
    # two queries (a scan, a join with a sort): every engine's 22 answers are the conformance kit's (kit.py)
    "tpch": ["--sf", "0.01", "--tests", "power", "--workload-option", "queries=1,18"],
    "tpcc": ["--warehouses", "1", "--vus", "1", "--duration", "1s", "--rampup", "0s"],
    "sysbench": ["--vus", "1", "--duration", "1s", "--rampup", "0s", "--workload-option", "tables=1",
                 "--workload-option", "table_size=100"],
    "crud": ["--rows", "3000", "--batches", "500"],
    "load": ["--sf", "0.01", "--workload-option", "variants=bulk"],
    "backup": ["--sf", "0.01", "--workload-option", "compression=none", "--workload-option", "kinds={kind}"],
    "sql": ["--workload-dir", "{shop}", "--duration", "20ms"],
    "replay": ["--workload-dir", "{shop}", "--log", "{log}", "--workload-option", "speed=max"],
    "encrypt": ["--encryption", "{encrypted}", "--warehouses", "1", "--workload-option", "vus=1",
                "--workload-option", "steady=1", "--workload-option", "rampup=0", "--workload-option", "way_back=false"],
}
# pairs another test already runs through the CLI (each checks its run directory against docs/result-format.md
# too): not run again here, to keep the suite's time (test_covered_elsewhere_still_exists checks they are there)
COVERED_ELSEWHERE: dict[tuple[str, str], str] = {
    ("sqlite", "tpch"): "tests/e2e/test_run_sqlite.py::run_dir",
    ("sqlite", "tpcc"): "tests/e2e/test_tpcc_e2e.py::test_sqlite",
    ("mariadb", "tpcc"): "tests/e2e/test_tpcc_e2e.py::test_mariadb",
    ("postgres", "tpcc"): "tests/e2e/test_tpcc_e2e.py::test_postgres_with_column_encryption",
    ("sqlite", "crud"): "tests/e2e/test_crud.py::sqlite_run",
    ("mariadb", "crud"): "tests/e2e/test_crud.py::test_mariadb_tde_crud",
    ("sqlite", "backup"): "tests/e2e/test_backup.py::test_sqlite_backups_are_timed_restored_and_scanned",
    ("mariadb", "backup"): "tests/e2e/test_backup.py::test_mariadb_dump_is_plaintext_under_tde_and_mariadb_backup_is_not",
    ("sqlite", "load"): "tests/e2e/test_bulkload.py::test_client_and_bulk_loads_per_table",
    ("sqlite", "sql"): "tests/e2e/test_sql_workload.py::test_the_example_on_sqlite",
    ("mariadb", "sql"): "tests/e2e/test_sql_workload.py::test_the_command_of_the_docs_on_three_engines",
    ("postgres", "sql"): "tests/e2e/test_sql_workload.py::test_the_command_of_the_docs_on_three_engines",
    ("external", "tpch"): "tests/engines/test_external.py::test_run_with_two_targets_end_to_end",
    ("postgres", "encrypt"): "tests/e2e/test_encrypt_offline.py::test_pgcrypto_switches_tpch_alone_and_the_scan_covers_it",
    ("mariadb", "encrypt"): "tests/e2e/test_encrypt_e2e.py::test_switch_on_and_back_under_tpcc",
    ("mariadb", "sysbench"):
        "tests/e2e/test_sysbench_e2e.py::test_mariadb_interleaved_slices_keep_one_connected_sysbench_per_config_and_step",
}
# pairs that fail today, each with what fails: expected to fail (strict: once a pair passes, its entry must go)
KNOWN_BROKEN: dict[tuple[str, str], str] = {}
# session fixtures holding the data a workload reads, generated once (tests/conftest.py)
DATA = {"tpch": "tpch_sf001", "load": "tpch_sf001", "backup": "tpch_sf001", "tpcc": "tpcc_w1"}
# remote engines -> the class fixture that starts a private server and returns its --target arguments
REMOTE = {"external": "external_target"}


def tdebench(args: list[str], capsys, env: dict[str, str] | None = None) -> tuple[int, str]:
    """Exit code and stderr of ``tdebench ARGS``: in this process, or in a new one with ``env`` added (a run
    stops every server this process started when it ends, the test's own target server too)."""
    if env is not None:
        done = subprocess.run([sys.executable, "-m", "tdebench", *args], capture_output=True, text=True, cwd=ROOT,
                              env={**os.environ, **env, "PYTHONPATH": str(ROOT / "src")}, timeout=600)
        return done.returncode, done.stderr
    with pytest.raises(SystemExit) as code:
        main(args)
    return int(code.value.code or 0), capsys.readouterr().err


def engine_args(name: str, request) -> tuple[list[str], dict[str, str] | None]:
    """How the matrix runs engine ``name`` (module docstring): arguments, and the environment of a new process
    for remote engines (None: in this process)."""
    engine = get_engine(name)
    if engine.remote:
        assert name in REMOTE, f"remote engine {name}: give it a private server in REMOTE of {__name__}"
        return request.getfixturevalue(REMOTE[name])
    try:
        engine.check_available()
    except EnvironmentProblem as exc:
        pytest.skip(f"{name} is not available here: {exc.one_line()}")
    settings = [a for k, v in kit.profile(name).settings.items() for a in ("--server-setting", f"{k}={v}")]
    return ["--engine", name, "--encryption", "none", "--no-report", "--no-restart-twins", *settings], None


def workload_args(workload: str, engine: str, tmp_path: Path, request) -> list[str]:
    assert workload in SMALLEST, f"workload {workload} has no smallest options: add them to SMALLEST in {__name__}"
    if workload in DATA:
        request.getfixturevalue(DATA[workload])
    shop = str(make_workload_dir(tmp_path / "shop")) if workload in ("sql", "replay") else ""
    log = tmp_path / "shop.log"
    log.write_text(REPLAY_LOG)
    kinds = engine_kinds(get_engine(engine).dialect) if workload == "backup" else []
    fill = {"{shop}": shop, "{log}": str(log), "{kind}": kinds[0].info.name if kinds else "",
            "{encrypted}": str(get_engine(engine).default_encrypted_spec())}
    args = ["--workload", workload]
    for arg in SMALLEST[workload]:
        for key, value in fill.items():
            arg = arg.replace(key, value)
        args.append(arg)
    return args


def check_completed(out: Path) -> None:
    """The run finished, every config's encryption check passed and its run directory is documented."""
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "completed", manifest["status"]
    assert not manifest.get("failures"), manifest["failures"]
    verification = json.loads((out / "verification.json").read_text())["configs"]
    assert verification and all(v["passed"] for v in verification.values()), verification
    assert all(v.get("answers_equal") is not False for v in verification.values()), verification
    assert undocumented(out) == []


def pytest_generate_tests(metafunc):
    if metafunc.cls is not None and issubclass(metafunc.cls, MatrixRow):
        metafunc.parametrize("workload", metafunc.cls.workloads)


class MatrixRow:
    """One engine with some workloads; subclassed below per registered engine (and per pair of an engine
    tdebench provisions)."""

    engine_name = ""
    workloads: tuple[str, ...] = ()

    def test_pair(self, workload, tmp_path, data_root, request, capsys):
        reason = unmet_need(workload, get_engine(self.engine_name))
        out = tmp_path / "run"
        if reason is not None:
            code, err = tdebench(["run", "--engine", self.engine_name, "--workload", workload, "--out", str(out)],
                                 capsys, {} if get_engine(self.engine_name).remote else None)
            lines = [line for line in err.splitlines() if line.strip()]
            assert code == 2 and len(lines) == 1 and reason in lines[0] and "fix:" in lines[0], err
            assert not out.exists(), "refused after the run directory was made"
            return
        if (self.engine_name, workload) in COVERED_ELSEWHERE:
            pytest.skip(f"run by {COVERED_ELSEWHERE[(self.engine_name, workload)]}")
        if (self.engine_name, workload) in KNOWN_BROKEN:
            request.applymarker(pytest.mark.xfail(reason=KNOWN_BROKEN[(self.engine_name, workload)], strict=True))
        engine, env = engine_args(self.engine_name, request)
        own = workload_args(workload, self.engine_name, tmp_path, request)
        if "--encryption" in own:  # the workload names the config's spec itself (encrypt: the target spec)
            at = engine.index("--encryption")
            engine = engine[:at] + engine[at + 2:]
        args = [*engine, *own]
        code, err = tdebench(["run", *args, "--trials", "1", "--warmup", "0", "--data-dir", str(data_root),
                              "--out", str(out)], capsys, env)
        assert code == 0, err[-3000:]
        check_completed(out)


for _name in engine_names():
    _rows = [tuple(workload_names())] if get_engine(_name).remote else [(w,) for w in workload_names()]
    for _workloads in _rows:
        _cls = "TestMatrix" + _name.capitalize() + ("" if len(_workloads) > 1 else _workloads[0].capitalize())
        _marks = [pytest.mark.slow(seconds=100)] if len(_workloads) > 1 else []  # a whole row on one worker
        globals()[_cls] = type(_cls, (MatrixRow,), {"engine_name": _name, "workloads": _workloads,
                                                     "__module__": __name__, "pytestmark": _marks})


def test_three_configs_write_every_report_table(tmp_path, data_root, capsys):
    """report/anova.csv needs three configs (here an A/A pair of plain SQLite and SQLCipher), two trials each."""
    out = tmp_path / "run"
    code, err = tdebench(["run", "--engine", "sqlite", "--encryption", "none,none,sqlcipher:aes-256-cbc",
                          "--workload", "crud", *SMALLEST["crud"], "--trials", "2", "--warmup", "0",
                          "--data-dir", str(data_root), "--out", str(out)], capsys)
    assert code == 0, err[-3000:]
    assert (out / "report" / "anova.csv").is_file()
    check_completed(out)


def test_covered_elsewhere_still_exists():
    """Each pair left to another test is still run there, and that run's directory is checked against the docs."""
    for (engine, workload), where in COVERED_ELSEWHERE.items():
        path, _, function = where.partition("::")
        text = (ROOT / path).read_text()
        assert f"def {function}(" in text, f"{where} is gone: run {engine} x {workload} in the matrix again"
        assert "undocumented(" in text or "check_example_run(" in text, f"{path} does not check its run directory"
        assert workload in text and engine in text, where


def test_every_registered_engine_and_workload_is_in_the_matrix():
    rows = {cls.engine_name for cls in globals().values() if isinstance(cls, type) and issubclass(cls, MatrixRow)
            and cls is not MatrixRow}
    assert rows == set(engine_names())
    assert set(workload_names()) <= set(SMALLEST)
    for engine in engine_names():
        pairs = [w for cls in globals().values() if isinstance(cls, type) and issubclass(cls, MatrixRow)
                 and cls.engine_name == engine for w in cls.workloads]
        assert sorted(pairs) == sorted(workload_names()), (engine, pairs)


@pytest.fixture(scope="class")
def external_target(tmp_path_factory) -> Iterator[tuple[list[str], dict[str, str]]]:
    """--target arguments of a private MariaDB server with TDE, and its password in the label's variable."""
    engine = get_engine("mariadb")
    try:
        engine.check_available()
    except EnvironmentProblem as exc:
        pytest.skip(f"external: no local server to reach (mariadb: {exc.one_line()})")
    server = engine.create_instance(Config("mariadb", parse_spec("tde:aes-256-cbc"), dict(kit.MARIADB_SMALL),
                                           tcp=True), tmp_path_factory.mktemp("matrix-target"), "matrix")
    try:
        server.start()
        yield (["--target", f"matrix=mariadb://bench@127.0.0.1:{server._port}/matrix#tde:aes-256-cbc",
                "--no-report"], {"TDEBENCH_PASSWORD_MATRIX": server._password})
    finally:
        server.destroy()



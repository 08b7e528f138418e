"""External targets against real local servers: two MariaDB instances (plain, TDE) and one PostgreSQL.

The servers are started through tdebench's own engines (TCP on 127.0.0.1, generated passwords) and then
used as if tdebench did not manage them: ``--target LABEL=URL#SPEC``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from dataclasses import fields
from pathlib import Path

import pytest

from tdebench.encryption import PLAIN, parse_spec
from tdebench.engines import Config, get_engine
from tdebench.api.engine import Instance
from tdebench.engines.external.configs import target_configs
from tdebench.errors import EnvironmentProblem, RunFailed, UsageError
from tdebench.workloads.tpch import answers, schema
from tdebench.workloads.tpch.loader import load_tpch
from tdebench.workloads.tpch.power import run_stream
from tdebench.workloads.tpch.translate import TpchTranslator
from tests.resultdoc import undocumented

ROOT = Path(__file__).resolve().parents[2]
SMALL = {"innodb_buffer_pool_size": "64M", "innodb_log_file_size": "32M", "innodb_log_buffer_size": "4M"}
SF = 0.01

pytestmark = pytest.mark.server


def _unavailable(name: str) -> str | None:
    """Why the local engine ``name`` cannot provide a server here (None if it can)."""
    try:
        get_engine(name).check_available()
    except (EnvironmentProblem, ImportError) as exc:
        return f"{name} engine not ready: {exc}"
    except Exception as exc:  # noqa: BLE001 - an engine still being written
        return f"{name} engine not ready: {type(exc).__name__}: {exc}"
    return None


MARIADB_MISSING = _unavailable("mariadb")
POSTGRES_MISSING = _unavailable("postgres")
needs_mariadb = pytest.mark.skipif(MARIADB_MISSING is not None, reason=str(MARIADB_MISSING))
needs_postgres = pytest.mark.skipif(POSTGRES_MISSING is not None, reason=str(POSTGRES_MISSING))
# the orchestrator must skip the at-rest scan of instances it cannot scan (docs/engines/external.md)
ORCHESTRATOR_READY = "scannable" in (ROOT / "src/tdebench/runner/orchestrator.py").read_text() and hasattr(
    Instance, "scannable")
needs_orchestrator = pytest.mark.skipif(not ORCHESTRATOR_READY, reason="the orchestrator still scans every "
                                        "instance's data directory (Instance.scannable diff not applied yet)")


@pytest.fixture(scope="module")
def mariadb(tmp_path_factory):
    """{"plain": (port, password), "tde": (port, password)}: two private MariaDB servers on 127.0.0.1."""
    if MARIADB_MISSING:
        pytest.skip(MARIADB_MISSING)
    engine = get_engine("mariadb")
    work = tmp_path_factory.mktemp("ext-mariadb")
    servers = {"plain": engine.create_instance(Config("mariadb", PLAIN, dict(SMALL), tcp=True), work, "tpch"),
               "tde": engine.create_instance(Config("mariadb", parse_spec("tde:aes-256-cbc"), dict(SMALL), tcp=True),
                                             work, "tpch")}
    try:
        for server in servers.values():
            server.start()
        conn = servers["plain"].connect()  # a second database on the plain server (one per target)
        try:
            conn.cursor().execute("CREATE DATABASE tpch2")
        finally:
            conn.close()
        yield {name: (s._port, s._password) for name, s in servers.items()}
    finally:
        for server in servers.values():
            server.destroy()


@pytest.fixture(scope="module")
def postgres(tmp_path_factory):
    """(port, password) of a private PostgreSQL server on 127.0.0.1 (role tdebench, database tpch)."""
    if POSTGRES_MISSING:
        pytest.skip(POSTGRES_MISSING)
    engine = get_engine("postgres")
    server = engine.create_instance(Config("postgres", PLAIN, {}, tcp=True), tmp_path_factory.mktemp("ext-pg"), "tpch")
    try:
        server.start()
        yield server.pgcluster.port, server.pgcluster.password
    finally:
        server.destroy()


def _target(label: str, url: str, password: str, monkeypatch, override: bool = False):
    monkeypatch.setenv(f"TDEBENCH_PASSWORD_{label.upper()}", password)
    config = target_configs([f"{label}={url}"], [label] if override else [], interactive=False)[0]
    instance = get_engine("external").create_instance(config, Path("/nonexistent"))
    instance.use_translator(TpchTranslator())  # what the orchestrator hands it for the tpch workload
    return instance


def _mysql_url(port: int, spec: str = "", scheme: str = "mariadb") -> str:
    return f"{scheme}://bench@127.0.0.1:{port}/tpch" + (f"#{spec}" if spec else "")


def _answers_ok(instance) -> None:
    result = run_stream(instance, instance.dialect, SF, 0)
    assert not result.failures, result.failures
    ref = answers.reference_dir(SF)
    for run in result.runs:
        _, expected = answers.read_answer_csv(ref / f"q{run.number:02d}.csv")
        actual = [answers.normalize_row(r) for r in run.rows]
        assert answers.compare_answers(run.number, expected, actual) == [], f"q{run.number:02d}"


# MariaDB servers reached as mariadb:// targets (a mysql:// URL is refused with the scheme to use) ------------------

@needs_mariadb
def test_mysql_url_on_a_mariadb_server_is_refused_with_the_scheme_to_use(mariadb, monkeypatch):
    port, password = mariadb["tde"]
    inst = _target("wrongscheme", _mysql_url(port, "tde:aes-256-cbc", "mysql"), password, monkeypatch)
    with pytest.raises(UsageError) as err:
        inst.start()
    text = err.value.one_line()
    assert "this server is MariaDB 10." in text and f"use mariadb://: --target 'wrongscheme=mariadb://bench@127.0.0.1:" \
        f"{port}/tpch#tde:aes-256-cbc'" in text, text


@needs_mariadb
@pytest.mark.parametrize("scheme", ["mariadb"])
def test_status_recorded_load_and_answers(mariadb, tpch_sf001, monkeypatch, scheme):
    plain_port, plain_pw = mariadb["plain"]
    tde_port, tde_pw = mariadb["tde"]
    plain = _target("plain", _mysql_url(plain_port, scheme=scheme), plain_pw, monkeypatch)
    enc = _target("enc", _mysql_url(tde_port, "tde:aes-256-cbc", scheme), tde_pw, monkeypatch)
    for inst in (plain, enc):
        inst.start()
        load_tpch(inst, inst.dialect, tpch_sf001[0])
        inst.check_encrypted([])
        _answers_ok(inst)
    try:
        status = enc.encryption_status()
        assert status["enabled"] and status["verdict"] == "confirmed" and status["found"] == "yes"
        assert status["mode"] == "cbc" and status["tables"] == "8 of 8 encrypted"
        assert "encryption_plugins.file_key_management=ACTIVE" in status["evidence"]
        assert "innodb_encrypt_tables=ON" in status["evidence"]
        assert "AES-256 is as declared, not verified" in status["reasons"]  # MariaDB hides the key length
        assert status["label_status"] == "unverifiable" and status["label_note"].startswith("key length")
        # where the keys live, as the server says it, and what that does not show
        assert "file_key_management (ACTIVE): keys in a key file on the server's host" in status["key_management"]
        assert "file key read from" in status["key_management"] and "not shown" in status["key_management"]
        status = plain.encryption_status()
        assert not status["enabled"] and status["verdict"] == "confirmed" and status["tables"] == "0 of 8 encrypted"
        assert status["key_management"] == "the server reports no key management"
        facts = enc.settings()
        assert "MariaDB" in facts["server_version"] and facts["dialect"] == scheme
        assert facts["product"].startswith("MariaDB 10.") and facts["status_access"] == "readable"
        sizes = enc.storage_breakdown()  # the target's own catalog, never a PostgreSQL function
        assert sizes["scope"] == "catalog" and sizes["data_dir_bytes"] is None
        assert set(sizes["tables"]) == {t.name for t in schema.TABLES}
        assert sizes["tables"]["lineitem"]["table_bytes"] > 0 and sizes["tables"]["lineitem"]["rows"] > 0
        assert facts["load"] == "LOAD DATA LOCAL INFILE"
        assert facts["encryption_verdicts"] == "start: confirmed (yes); tables: confirmed (yes)"
        assert enc.storage_bytes() > 1_000_000
        assert enc.translator.sources["workload"] >= 22 or scheme == "mysql"
        assert not enc.scannable and enc.data_dir is None and enc.server_pids() == []
    finally:
        plain.destroy()
        enc.destroy()


@needs_mariadb
@pytest.mark.parametrize("server,declared,word", [
    ("plain", "tde:aes-256-cbc", "reports no encryption"),
    ("tde", "none", "reports encryption"),
])
def test_mislabelled_target_refused(mariadb, monkeypatch, server, declared, word):
    port, password = mariadb[server]
    spec = "" if declared == "none" else declared
    inst = _target("wrong", _mysql_url(port, spec), password, monkeypatch)
    with pytest.raises(RunFailed) as err:
        inst.start()
    text = err.value.one_line()
    assert "'wrong' is declared" in text and word in text and "--override-encryption-check wrong" in text
    assert inst.checks["start"]["verdict"] == "contradicted"


@needs_mariadb
def test_wrong_mode_refused(mariadb, monkeypatch):
    port, password = mariadb["tde"]
    inst = _target("ctr", _mysql_url(port, "tde:aes-256-ctr", "mariadb"), password, monkeypatch)
    with pytest.raises(RunFailed, match="CBC mode, not CTR"):
        inst.start()


@needs_mariadb
def test_override_is_recorded(mariadb, tpch_sf001, monkeypatch):
    port, password = mariadb["plain"]
    inst = _target("forced", _mysql_url(port, "tde:aes-256-cbc"), password, monkeypatch, override=True)
    inst.start()
    try:
        load_tpch(inst, inst.dialect, tpch_sf001[0])
        inst.check_encrypted([])  # not refused ...
        status = inst.encryption_status()
        assert status["verdict"] == "contradicted" and status["check"] == "overridden"  # ... but recorded
        assert "override-encryption-check" in status["override"]
        assert inst.settings()["encryption_check"] == "overridden"
    finally:
        inst.destroy()


@needs_mariadb
def test_wrong_password_is_an_environment_problem_without_the_password(mariadb, monkeypatch):
    port, _ = mariadb["plain"]
    inst = _target("badpw", _mysql_url(port), "not-the-password-123", monkeypatch)
    with pytest.raises(EnvironmentProblem) as err:
        inst.start()
    assert "not-the-password-123" not in err.value.one_line() and "cannot connect" in err.value.one_line()


# PostgreSQL -------------------------------------------------------------------------------------------------

@needs_postgres
def test_postgres_target(postgres, tpch_sf001, monkeypatch):
    port, password = postgres
    url = f"postgresql://tdebench@127.0.0.1:{port}/tpch"
    inst = _target("pg", url, password, monkeypatch)
    inst.start()
    try:
        load_tpch(inst, inst.dialect, tpch_sf001[0])
        inst.check_encrypted([])
        _answers_ok(inst)
        status = inst.encryption_status()
        assert status["verdict"] == "confirmed" and status["found"] == "no" and "PostgreSQL 15" in status["server"]
        assert inst.settings()["load"] == "COPY FROM STDIN" and inst.translator.identity
    finally:
        inst.destroy()
    declared = _target("pgtde", url + "#tde:aes-128-cbc", password, monkeypatch)
    with pytest.raises(RunFailed, match="reports no encryption"):
        declared.start()
    fs = _target("pgfs", url + "#fs:gocryptfs", password, monkeypatch)
    with pytest.raises(RunFailed, match="invisible to SQL"):
        fs.start()


# `tdebench run --target ...` end to end ---------------------------------------------------------------------

# two queries (a scan of lineitem, a join with a sort): what these runs check is the targets' labels and answers
# beside them, whatever the queries; MariaDB's 22 answers are the conformance kit's (tests/engines/kit.py)
TWO_QUERIES = ("--workload-option", "queries=1,18")


def _tdebench(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, **env, "PYTHONPATH": str(ROOT / "src")}
    return subprocess.run([sys.executable, "-m", "tdebench", *args], capture_output=True, text=True, env=full,
                          timeout=900, cwd=ROOT)


@needs_mariadb
@needs_orchestrator
def test_run_with_two_targets_end_to_end(mariadb, tpch_sf001, tmp_path):
    (plain_port, plain_pw), (tde_port, tde_pw) = mariadb["plain"], mariadb["tde"]
    out = tmp_path / "run"
    result = _tdebench("run", "--target", f"plain={_mysql_url(plain_port)}",
                       "--target", f"enc=mariadb://bench@127.0.0.1:{tde_port}/tpch?password_env=ENC_PW#tde:aes-256-cbc",
                       "--sf", "0.01", *TWO_QUERIES, "--trials", "1", "--warmup", "0",
                       "--data-dir", str(Path(tpch_sf001[0]).parent),
                       "--out", str(out), env={"TDEBENCH_PASSWORD_PLAIN": plain_pw, "ENC_PW": tde_pw})
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    manifest = json.loads((out / "manifest.json").read_text())
    configs = {c["label"]: c for c in manifest["configs"]}
    assert set(configs) == {"plain", "enc"} and manifest["status"] == "completed"
    assert configs["enc"]["settings"]["encryption_verdicts"] == "start: confirmed (yes); tables: confirmed (yes)"
    assert configs["plain"]["settings"]["encryption_verdicts"] == "start: confirmed (no); tables: confirmed (no)"
    assert "MariaDB" in configs["enc"]["engine_version"]
    verification = json.loads((out / "verification.json").read_text())["configs"]
    assert configs["plain"]["label_status"] == "confirmed" and configs["enc"]["label_status"] == "unverifiable"
    assert configs["enc"]["storage"]["scope"] == "catalog" and "error" not in configs["enc"]["storage"]
    assert undocumented(out) == []  # every file and CSV column is in docs/result-format.md
    for label, enabled in (("plain", False), ("enc", True)):
        entry = verification[label]
        assert entry["status"]["enabled"] is enabled and entry["status"]["verdict"] == "confirmed"
        assert entry["note"] == "on-disk verification not possible for external targets"
        assert entry["answers_equal"] is True
    report = (out / "report" / "index.html").read_text()
    assert "on-disk verification not possible for external targets" in report
    for path in out.rglob("*"):  # no password in any file of the run directory
        if path.is_file():
            data = path.read_bytes()
            assert plain_pw.encode() not in data and tde_pw.encode() not in data, path


@needs_mariadb
@needs_orchestrator
def test_run_refuses_mislabel_unless_overridden(mariadb, tpch_sf001, tmp_path):
    port, password = mariadb["plain"]
    common = ["--sf", "0.01", *TWO_QUERIES, "--trials", "1", "--warmup", "0", "--no-report",
              "--data-dir", str(Path(tpch_sf001[0]).parent)]
    env = {"TDEBENCH_PASSWORD_BASE": password, "TDEBENCH_PASSWORD_FAKE": password}
    same = _tdebench("run", "--target", f"base={_mysql_url(port)}", "--target",
                     f"fake={_mysql_url(port, 'tde:aes-256-cbc')}", *common, "--out", str(tmp_path / "same"), env=env)
    assert same.returncode == 2 and "two targets use the same database" in same.stderr
    targets = ["--target", f"base={_mysql_url(port)}",
               "--target", f"fake=mariadb://bench@127.0.0.1:{port}/tpch2#tde:aes-256-cbc"]
    refused = _tdebench("run", *targets, *common, "--out", str(tmp_path / "refused"), env=env)
    assert refused.returncode == 1 and "'fake' is declared tde:aes-256-cbc" in refused.stderr, refused.stderr[-2000:]
    kept = _tdebench("run", *targets, "--override-encryption-check", "fake", *common, "--out", str(tmp_path / "kept"),
                     env=env)
    assert kept.returncode == 0, kept.stderr[-3000:]
    verification = json.loads((tmp_path / "kept" / "verification.json").read_text())["configs"]
    assert verification["fake"]["status"]["check"] == "overridden"
    assert verification["fake"]["status"]["verdict"] == "contradicted"
    assert "override-encryption-check" in verification["fake"]["status"]["override"]
    assert verification["fake"]["label_status"] == "overridden"
    assert "OVERRIDDEN, NOT CONFIRMED" in kept.stdout + kept.stderr


@needs_mariadb
@needs_orchestrator
@pytest.mark.heavy  # a killed run resumes in the default suite: tests/e2e/test_interrupt.py (SQLite); the
# targets' labels survive a plan's round trip in tests/unit (the resumed plan is the one the manifest keeps)
@pytest.mark.slow(seconds=45)
@pytest.mark.skipif("name" not in {f.name for f in fields(Config)},
                    reason="Config has no 'name' field yet: a resumed plan would lose the target labels")
def test_killed_run_resumes_with_its_targets(mariadb, tpch_sf001, tmp_path):
    (plain_port, plain_pw), (tde_port, tde_pw) = mariadb["plain"], mariadb["tde"]
    out = tmp_path / "run"
    env = {**os.environ, "TDEBENCH_PASSWORD_PLAIN": plain_pw, "TDEBENCH_PASSWORD_ENC": tde_pw,
           "PYTHONPATH": str(ROOT / "src")}
    args = ["--target", f"plain={_mysql_url(plain_port)}", "--target", f"enc={_mysql_url(tde_port, 'tde:aes-256-cbc')}",
            "--sf", "0.01", "--trials", "2", "--no-report", "--data-dir", str(Path(tpch_sf001[0]).parent)]
    # warm-up + 2 trials of 2 targets: killed after 3 of the 6, so 3 are left for the resumed run
    proc = subprocess.Popen([sys.executable, "-m", "tdebench", "run", *args, "--out", str(out)], env=env, cwd=ROOT,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None:
            csv_path = out / "measurements.csv"
            if csv_path.exists() and csv_path.read_text().count(",trial,,trial,completed,") >= 3:
                break
            time.sleep(0.2)
    finally:
        proc.kill()
        proc.wait()
    resumed = _tdebench("run", "--resume", str(out), env={"TDEBENCH_PASSWORD_PLAIN": plain_pw,
                                                           "TDEBENCH_PASSWORD_ENC": tde_pw})
    assert resumed.returncode == 0, resumed.stderr[-3000:]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "completed" and {c["label"] for c in manifest["configs"]} == {"plain", "enc"}

"""The threat model through the real CLI (`tdebench verify`), one verify run per engine shared by the assertions.

* MariaDB ``none,tde:aes-256-ctr,tde:aes-256-ctr@tables``: the redo log and the temporary files are exposed under
  ``@tables`` and protected under the full scope (docs/security.md).
* PostgreSQL ``none,column:aes-256,fs:gocryptfs``: a SELECT-only user reads plaintext under gocryptfs and
  ciphertext under column encryption; the column config's sort spill files are scanned and hold plaintext.
* A slow-query log turned on with ``--server-setting`` is scanned and is plaintext under TDE.
* SQLite/SQLCipher with ``temp_store=file``: the sorter's temporary file is plaintext.
* None of these runs writes a key, password or canary value into its run directory or report.
"""

from __future__ import annotations

import io
import json
import shutil
import tempfile
from contextlib import redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tdebench.cli.app import main
from tdebench.encryption import issued_secrets
from tdebench.verify import atrest
from tests.e2e.test_security import ENGINES, _forms


@dataclass
class Verified:
    """One `tdebench verify` run: exit code, output, run directory, the canaries it planted."""

    code: int
    stdout: str
    run_dir: Path
    canaries: list[str] = field(default_factory=list)

    def rows(self, label: str) -> dict[str, dict]:
        entry = json.loads((self.run_dir / "verification.json").read_text())["configs"][label]
        return {r["id"]: r for r in entry["threats"]["rows"]}

    def status(self, label: str, row: str) -> str:
        return self.rows(label)[row]["status"]


def _verify(args: list[str], data_dir: Path, base: Path) -> Verified:
    """`tdebench verify ARGS` in this process, with every canary it plants recorded."""
    planted: list[str] = []
    original = atrest.new_markers

    def recording(count: int = 4) -> list[str]:
        markers = original(count)
        planted.extend(markers)
        return markers

    out, err = io.StringIO(), io.StringIO()
    run_dir = base / "run"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(atrest, "new_markers", recording)
        mp.setenv("XDG_STATE_HOME", str(base / "state"))
        with redirect_stdout(out), redirect_stderr(err):
            try:
                main(["verify", *args, "--out", str(run_dir), "--data-dir", str(data_dir)])
                code = 0
            except SystemExit as exc:
                code = int(exc.code or 0)
    assert code == 0, err.getvalue()[-3000:]
    return Verified(code, out.getvalue(), run_dir, planted)


def _skip_unless(name: str) -> None:
    missing = ENGINES[name][1]
    if missing:
        pytest.skip(missing)


@pytest.fixture(scope="module")
def base():
    path = Path(tempfile.mkdtemp(prefix="t19-threats-"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="module")
def mariadb(base, tpch_sf001) -> Verified:
    _skip_unless("mariadb")
    return _verify(["--engine", "mariadb", "--encryption", "none,tde:aes-256-ctr,tde:aes-256-ctr@tables"],
                   Path(tpch_sf001[0]).parent, base / "mariadb")


@pytest.fixture(scope="module")
def postgres(base, tpch_sf001) -> Verified:
    _skip_unless("postgres")
    return _verify(["--engine", "postgres", "--encryption", "none,column:aes-256,fs:gocryptfs"],
                   Path(tpch_sf001[0]).parent, base / "postgres")


@pytest.fixture(scope="module")
def slow_log(base, tpch_sf001) -> Verified:
    _skip_unless("mariadb")
    return _verify(["--engine", "mariadb", "--encryption", "tde:aes-256-ctr", "--server-setting", "slow_query_log=ON",
                    "--server-setting", "long_query_time=0.5"], Path(tpch_sf001[0]).parent, base / "slow-log")


@pytest.fixture(scope="module")
def sqlite_file_temp(base, tpch_sf001) -> Verified:
    return _verify(["--engine", "sqlite", "--encryption", "sqlcipher:aes-256-cbc", "--server-setting",
                    "temp_store=file"], Path(tpch_sf001[0]).parent, base / "sqlite")


@pytest.mark.server
def test_mariadb_scopes_differ_in_redo_log_and_temp_files(mariadb):
    full, tables, plain = "mariadb-tde-aes-256-ctr", "mariadb-tde-aes-256-ctr-tables", "mariadb-none"
    for row in ("redo_log", "temp_files"):
        assert mariadb.status(tables, row) == "exposed", mariadb.rows(tables)[row]
        assert mariadb.status(full, row) == "protected", mariadb.rows(full)[row]
        assert mariadb.status(plain, row) == "exposed"
    assert mariadb.status(full, "data_dir") == "protected" and mariadb.status(tables, "data_dir") == "exposed"
    assert mariadb.status(full, "select_user") == "exposed"  # TDE decrypts for every user with SELECT
    temp = mariadb.rows(tables)["temp_files"]["evidence"]
    assert temp["hits"] and temp["files_scanned"] and temp["probe"]["spill_files"] > 0
    disk = mariadb.rows(full)["disk"]
    keys = disk["evidence"]["keys"]
    assert keys[0]["on_disk"] and keys[0]["mode"] == "0600" and not keys[0]["found_in_clear"]
    assert keys[1]["on_disk"] is False  # the file key exists only while the server starts (the lab's arrangement)
    # ... which no server that restarts unattended has: its file key is on the disk, beside keys.enc
    assert disk["status"] == "exposed" and disk["evidence"]["hits"] == {} and "lab arrangement" in disk["summary"]
    assert mariadb.status(full, "host_keys") == "exposed" and mariadb.status(plain, "host_keys") == "not applicable"


@pytest.mark.server
def test_mariadb_table_is_printed_and_reported(mariadb):
    assert "threat model of mariadb-tde-aes-256-ctr-tables" in mariadb.stdout
    assert "its redo log / WAL" in mariadb.stdout and "=> tde:aes-256-ctr stops" in mariadb.stdout
    md = (mariadb.run_dir / "report" / "summary.md").read_text()
    html = (mariadb.run_dir / "report" / "index.html").read_text()
    assert "## Threat model: mariadb" in md and 'id="threats"' in html
    sentence = json.loads((mariadb.run_dir / "verification.json").read_text())[
        "configs"]["mariadb-tde-aes-256-ctr-tables"]["threats"]["sentence"]
    assert sentence.startswith("tde:aes-256-ctr@tables ") and "does not stop a stolen data directory" in sentence
    assert sentence in md and sentence in html


@pytest.mark.server
def test_postgres_select_user_and_spill_files(postgres):
    column, fs = "postgres-column-aes-256", "postgres-fs-gocryptfs"
    assert postgres.status(fs, "select_user") == "exposed"
    assert postgres.status(column, "select_user") == "protected"
    relations = postgres.rows(column)["select_user"]["evidence"]["relations"]
    assert "error" in relations["tdebench_canary"] and relations["tdebench_canary_enc"]["rows"] == 4
    spill = postgres.rows(column)["temp_files"]
    assert spill["status"] == "exposed", spill
    assert spill["evidence"]["probe"]["spill_files"] > 0 and spill["evidence"]["bytes_scanned"] > 0
    assert any("pgsql_tmp" in f for f in spill["evidence"]["files_with_hits"])
    assert postgres.status(fs, "temp_files") == "protected"
    assert postgres.status(column, "data_dir") == "protected"
    assert postgres.status("postgres-none", "data_dir") == "exposed"
    md = (postgres.run_dir / "report" / "summary.md").read_text()
    assert spill["summary"] in md  # the scan of the spill files is shown


@pytest.mark.server
def test_slow_query_log_is_scanned_and_plaintext_under_tde(slow_log):
    row = slow_log.rows("mariadb-tde-aes-256-ctr")["statement_log"]
    assert row["status"] == "exposed", row
    assert row["evidence"]["settings"]["slow_query_log"] == "ON" and row["evidence"]["probe_recorded"]
    assert any(f.endswith("-slow.log") for f in row["evidence"]["files_with_hits"])
    assert slow_log.status("mariadb-tde-aes-256-ctr", "data_dir") == "protected"  # the log has its own row
    assert slow_log.status("mariadb-tde-aes-256-ctr", "disk") == "exposed"  # ... and it is on the disk
    # the slow log lies in the instance directory: a process on the running host reads it in clear too
    assert "does not stop a copy of the whole disk, a process on the running host that reads its files, root on " \
           "the running host, the statement log" in \
        json.loads((slow_log.run_dir / "verification.json").read_text())["configs"]["mariadb-tde-aes-256-ctr"][
            "threats"]["sentence"]


@pytest.mark.server
def test_postgres_statement_log_has_literals_but_never_the_column_key(base):
    """log_statement=all under column encryption: the probe's literals are in the log, the key (a bound
    parameter on every connection) is not."""
    _skip_unless("postgres")
    from tdebench.encryption import parse_spec
    from tdebench.engines import get_engine
    from tdebench.api.engine import Config
    from tdebench.verify.threat_checks import statement_log_row
    from tdebench.verify.threat_rows import Needles

    engine = get_engine("postgres")
    settings = {**engine.default_settings(), "log_statement": "all"}
    workdir = base / "pg-log"
    workdir.mkdir(mode=0o755)
    instance = engine.create_instance(Config("postgres", parse_spec("column:aes-256"), settings), workdir)
    try:
        instance.start()
        markers = atrest.new_markers()
        instance.plant_canaries(markers)
        probes = instance.threats()
        row = statement_log_row(probes, Needles(tuple(markers)), probes.statement_logs())
        assert row.status == "exposed" and row.evidence["hits"].get("canary-1") == 1, row
        log = instance.pgcluster.log_path.read_bytes()
        assert b"set_config('tdebench.key', $1" in log  # the statement is logged, its parameter is not
        assert instance._key.hex().encode() not in log and instance._key.raw() not in log
    finally:
        instance.destroy()


def test_sqlcipher_sorter_temp_file_is_plaintext(sqlite_file_temp):
    row = sqlite_file_temp.rows("sqlite-sqlcipher-aes-256-cbc")["temp_files"]
    assert row["status"] == "exposed" and "(deleted, still open)" in row["summary"], row
    assert sqlite_file_temp.status("sqlite-sqlcipher-aes-256-cbc", "data_dir") == "protected"


def _run_files(run: Verified) -> dict[Path, bytes]:
    return {p: p.read_bytes() for p in run.run_dir.rglob("*") if p.is_file()}


@pytest.mark.parametrize("name", [pytest.param("mariadb", marks=pytest.mark.server),
                                  pytest.param("postgres", marks=pytest.mark.server),
                                  pytest.param("slow_log", marks=pytest.mark.server), "sqlite_file_temp"])
def test_no_key_password_or_canary_in_run_directory_or_report(name, request):
    run = request.getfixturevalue(name)
    files = _run_files(run)
    assert any(p.name == "index.html" for p in files) and any(p.name == "verification.json" for p in files)
    assert run.canaries, "no canary was planted"
    needles = [form for s in issued_secrets() if len(s) >= 8 for form in _forms(s)] + [c.encode() for c in run.canaries]
    leaks = sorted({str(p.relative_to(run.run_dir)) for p, data in files.items() for n in needles if n in data})
    assert not leaks, f"secret or canary values found in {leaks}"
    assert "canary-1" in json.dumps(json.loads((run.run_dir / "verification.json").read_text()))

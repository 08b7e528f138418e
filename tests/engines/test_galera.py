"""Galera clusters through the engine conformance kit, plus cluster checks (real 2-node clusters on loopback) and
bad input (node counts, a missing provider, a port range in use)."""

from __future__ import annotations

import fnmatch
import shutil
import socket
import time
from pathlib import Path

import psutil
import pytest

from tdebench.encryption import PLAIN
from tdebench.engines import Config, get_engine
from tdebench.errors import EnvironmentProblem, UsageError
from tdebench.verify.atrest import verify_at_rest
from tdebench.workloads.tpch.workload import TpchWorkload
from tests.availability import engine_missing
from tests.cli.test_bad_input import tdebench
from tests.engines.kit import kit_for, profile
from tests.instances import run_sql

GCACHE = ("node*/data/galera.cache", "node*/data/gcache.page.*")
PROVIDER = Path("/usr/lib/galera/libgalera_smm.so")
_MISSING = engine_missing("galera")


def rows_per_node(inst) -> list[int]:
    """The rows of table t as each node has them (read on the node itself)."""
    out = []
    for node in inst.nodes:
        conn = node._connect()
        try:
            cur = conn.cursor()
            cur.execute("SELECT COUNT(*) FROM t")
            out.append(cur.fetchone()[0])
        finally:
            conn.close()
    return out


@pytest.mark.server
@pytest.mark.slow(seconds=90)
@pytest.mark.skipif(bool(_MISSING), reason=_MISSING or "available")
class TestGaleraConformance(kit_for("galera")):
    """The kit on a plain and a TDE 2-node cluster, and the cluster's own checks on the same instances."""

    def test_at_rest_scan_plain_hits_encrypted_none(self, loaded):
        """Plain: hits. TDE: no hit in any file MariaDB encrypts; the gcache of every node holds the canary rows
        in clear (galera-4 26.4 has no gcache encryption), which the verdict reports as outside-scope hits."""
        for text, inst in loaded.items():
            verdict = verify_at_rest(inst, known_plaintext=TpchWorkload.known_plaintext)
            assert verdict["files_scanned"] > 0 and verdict["passed"], (text, verdict["files_with_hits"])
            nodes = {f["path"].split("/")[0] for f in verdict["files"]}
            assert nodes == {"node1", "node2"}, nodes  # every node's directory is scanned
            if text == "none":
                assert verdict["marker_hits"] > 0 and verdict["known_plaintext_hits"] > 0
                continue
            stray = [p for p in verdict["files_with_hits"] if not any(fnmatch.fnmatch(p, g) for g in GCACHE)]
            assert not stray, (text, stray)
            in_gcache = {f["path"].split("/")[0] for f in verdict["files"]
                         if f["hits"] and any(fnmatch.fnmatch(f["path"], g) for g in GCACHE)}
            assert in_gcache == {"node1", "node2"}, in_gcache  # the gcache of every node holds rows in clear
            assert verdict["outside_scope_hits"] == verdict["marker_hits"] + verdict["known_plaintext_hits"] > 0
            assert set(GCACHE) <= set(verdict["outside_scope"])

    def test_every_node_is_synced_and_encrypted_as_configured(self, loaded):
        for text, inst in loaded.items():
            status = inst.encryption_status()
            assert sorted(status["nodes"]) == ["node1", "node2"]
            for name, node in status["nodes"].items():
                assert node["cluster_size"] == "2" and node["state"] == "Synced", (text, name, node)
                assert node["enabled"] is (text != "none"), (text, name, node)
                assert node["gcache_encryption"]["offered"] is False  # galera-4 26.4 (Debian): none
            assert status["gcache_encrypted"] is False

    def test_the_joiner_received_the_data_by_state_transfer(self, loaded):
        """Node 2 started with an empty datadir: its tables came by rsync SST and later write sets."""
        for text, inst in loaded.items():
            conn = inst.peers[0]._connect()
            try:
                cur = conn.cursor()
                cur.execute("SELECT COUNT(*) FROM lineitem")
                assert cur.fetchone()[0] > 50000, text
            finally:
                conn.close()
            assert "SST" in (inst.peers[0].log_path.read_text(errors="replace")), text

    def test_replication_counters_are_reported(self, loaded):
        for inst in loaded.values():
            counters = inst.counters()
            assert counters["cert_failures"] >= 0 and counters["flow_control_paused_ns"] >= 0
            assert counters["pages_read"] >= 0

    def test_stop_leaves_no_process(self, engine, tmp_path):
        """The kit's check, and more: no node's process (mariadbd, garbd, rsync) and no directory is left."""
        inst = engine.create_instance(Config("galera", PLAIN, dict(profile("galera").settings)), tmp_path)
        inst.start()
        pids = inst.server_pids()
        root = Path(inst.data_dir).resolve()
        assert len(pids) >= 2 and sorted(p.name for p in root.iterdir()) == ["node1", "node2"]
        inst.destroy()
        inst.destroy()  # idempotent
        assert not [p for p in pids if psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE]
        assert not root.exists() and not list(tmp_path.iterdir())
        left = [p.info for p in psutil.process_iter(["pid", "name", "cmdline"])
                if p.info["name"] in ("mariadbd", "garbd", "rsync") and str(root) in " ".join(p.info["cmdline"] or [])]
        assert not left, left


# bad input -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("nodes, fragment", [("0", "--nodes 0 is no cluster"), ("1", "--nodes 1 is no cluster"),
                                             ("10", "more than 9 nodes")])
def test_a_node_count_that_is_no_cluster_is_one_line_exit_2(nodes, fragment, tmp_path):
    result = tdebench("run", "--engine", "galera", "--nodes", nodes, "--workload", "tpcc", "--out",
                      str(tmp_path / "out"))
    assert result.returncode == 2, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and fragment in lines[0] and "Traceback" not in result.stderr, result.stderr
    assert not (tmp_path / "out").exists()


def test_nodes_is_refused_for_an_engine_that_is_no_cluster(tmp_path):
    result = tdebench("run", "--engine", "mariadb", "--nodes", "3", "--out", str(tmp_path / "out"))
    assert result.returncode == 2 and "--nodes applies to cluster engines only" in result.stderr, result.stderr


def test_a_missing_provider_is_one_line_exit_3_naming_the_package(tmp_path, monkeypatch):
    monkeypatch.setenv("TDEBENCH_GALERA_PROVIDER", str(tmp_path / "libgalera_smm.so"))
    result = tdebench("run", "--engine", "galera", "--workload", "tpcc", "--out", str(tmp_path / "out"))
    assert result.returncode == 3, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "galera-4" in lines[0] and "apt-get install galera-4" in lines[0], result.stderr
    # engines are checked once the run directory exists (as for every engine): nothing else was made
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["manifest.json", "measurements.csv"]


def test_a_port_range_in_use_is_one_line_exit_3(tmp_path):
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        result = tdebench("run", "--engine", "galera", "--workload", "tpcc", "--server-setting",
                          f"ports={port}-{port + 3}", "--out", str(tmp_path / "out"))
    assert result.returncode == 3, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and f"ports {port}-{port + 3}" in lines[0] and "needs 12" in lines[0], result.stderr
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("settings, error", [({"nodes": "two"}, "bad node count"),
                                             ({"wsrep_sst_method": "mysqldump"}, "managed by tdebench"),
                                             ({"gcache_size": "lots"}, "bad gcache_size"),
                                             ({"ports": "80-90"}, "bad port range"),
                                             ({"sst": "mysqldump"}, "unknown state transfer method")])
def test_settings_are_validated(settings, error):
    with pytest.raises(UsageError, match=error):
        get_engine("galera").validate_settings(settings)


def test_the_provider_is_found_or_named(monkeypatch, tmp_path):
    from tdebench.engines.mariadb import galera_settings as gs

    monkeypatch.setattr(gs, "PROVIDER_DIRS", (tmp_path,))
    with pytest.raises(EnvironmentProblem, match="libgalera_smm.so is missing") as info:
        gs.find_provider()
    assert "apt-get install galera-4" in info.value.one_line()
    if PROVIDER.is_file() and shutil.which("rsync"):
        monkeypatch.setattr(gs, "PROVIDER_DIRS", (PROVIDER.parent,))
        assert gs.find_provider() == PROVIDER


@pytest.mark.heavy  # a rejoin by IST in the default suite: test_galera_tls (over TLS); this one adds SST
@pytest.mark.server
@pytest.mark.slow(seconds=65)
@pytest.mark.skipif(bool(_MISSING), reason=_MISSING or "available")
def test_a_killed_node_rejoins_by_ist_then_by_sst_under_load(tmp_path):
    """3-node TDE cluster, inserts of a canary text on node 1 all along: node 3 is killed and rejoins by IST (its
    position recovered from InnoDB), killed again with its data deleted and rejoins by SST; every node ends with
    the same rows, and the files node 3 received hold the canary only in its gcache."""
    import threading

    from tdebench.encryption import parse_spec
    from tdebench.verify.atrest import new_markers, scan_directory

    marker = new_markers(1)[0]
    settings = {**profile("galera").settings, "nodes": "3"}
    inst = get_engine("galera").create_instance(Config("galera", parse_spec("tde:aes-256-ctr"), settings), tmp_path)
    stop, inserted, errors = threading.Event(), [0], []

    def load() -> None:
        conn = inst.connect()
        try:
            cur = conn.cursor()
            while not stop.is_set():
                cur.execute("INSERT INTO t (v) VALUES (%s)", (marker,))
                conn.commit()
                inserted[0] += 1
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            conn.close()

    try:
        inst.start()
        run_sql(inst, "CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(100)) ENGINE=InnoDB")
        worker = threading.Thread(target=load)
        worker.start()
        try:
            time.sleep(2)  # node 3 has applied write sets of the load: it has a position to recover
            inst.cluster().kill_node(3)
            ist = inst.cluster().rejoin_node(3)
            inst.cluster().kill_node(3)
            sst = inst.cluster().rejoin_node(3, full_transfer=True)
        finally:
            stop.set()
            worker.join()
        assert not errors, errors
        assert ist["transfer"] == "IST" and sst["transfer"] == "SST", (ist, sst)
        assert ist["seconds_to_synced"] > 0 and sst["files_received"] > 0
        counts = rows_per_node(inst)
        assert counts == [inserted[0]] * 3 and inserted[0] > 0, (counts, inserted)
        inst.flush_to_disk()
        received = scan_directory(inst.nodes[2].datadir, [marker])
        holding = sorted(received.files_with_hits)
        assert holding and all(p == "galera.cache" or p.startswith("gcache.page.") for p in holding), holding
    finally:
        inst.destroy()
    assert not list(tmp_path.iterdir())


def test_the_transfer_kind_is_read_from_the_log():
    from tdebench.engines.mariadb.galera_rejoin import transfer_kind

    assert transfer_kind("WSREP_SST: [INFO] rsync IST completed on joiner (x)\nWSREP: Receiving IST: 2 writesets") == "IST"
    assert transfer_kind("WSREP_SST: [INFO] rsync SST completed on joiner (x)\nWSREP: Receiving IST: 3 writesets") == "SST"
    assert transfer_kind("WSREP: Synchronized with group, ready for connections") == "none"


@pytest.mark.server
@pytest.mark.slow(seconds=30)
@pytest.mark.skipif(bool(_MISSING) or not shutil.which("mariabackup") or not shutil.which("socat"),
                    reason=_MISSING or "mariabackup or socat missing")
def test_a_tde_joiner_by_mariabackup_sst_holds_the_rows_only_in_its_gcache(tmp_path):
    """sst=mariabackup: the joiner's files come from a streamed backup of node 1 (the donor's mariabackup reads
    node 1's key while the joiner starts); under TDE the rows it received are in clear only in its gcache."""
    from tdebench.encryption import issued_secrets, parse_spec
    from tdebench.verify.atrest import new_markers, scan_directory

    markers = new_markers(2)
    before = issued_secrets()  # the cluster's secrets are those issued from here on (not every test's before it)
    settings = {**profile("galera").settings, "sst": "mariabackup"}
    inst = get_engine("galera").create_instance(Config("galera", parse_spec("tde:aes-256-ctr"), settings), tmp_path)
    try:
        inst.start()
        joiner = inst.peers[0]
        assert "mariabackup SST completed on joiner" in joiner.log_path.read_text(errors="replace")
        inst.plant_canaries(markers)
        inst.flush_to_disk()
        received = scan_directory(joiner.datadir, markers)
        holding = sorted(received.files_with_hits)
        assert holding and all(p == "galera.cache" or p.startswith("gcache.page.") for p in holding), holding
        secrets_ = [s.encode() for s in issued_secrets() - before if len(s) >= 16]
        assert secrets_, "the cluster issued no secret"
        for path in Path(inst.data_dir).rglob("*"):
            if path.is_file() and not path.is_symlink() and path.stat().st_size < 64 << 20:
                data = path.read_bytes()
                assert not any(s in data for s in secrets_), f"a secret appears in {path}"
    finally:
        inst.destroy()
    assert not list(tmp_path.iterdir())


@pytest.mark.server
@pytest.mark.slow(seconds=35)
@pytest.mark.skipif(bool(_MISSING), reason=_MISSING or "available")
def test_snapshot_restore_and_cache_resize_act_on_every_node(tmp_path):
    """--reset snapshot: the whole cluster goes back to the snapshot; --memory-ratio: every node's buffer pool."""
    inst = get_engine("galera").create_instance(Config("galera", PLAIN, dict(profile("galera").settings)), tmp_path)

    def insert(values: str) -> None:
        run_sql(inst, f"INSERT INTO t (v) VALUES {values}")

    try:
        inst.start()
        run_sql(inst, "CREATE TABLE t (id INT AUTO_INCREMENT PRIMARY KEY, v INT)")
        insert("(1), (2)")
        inst.snapshot(tmp_path / "snap")
        insert("(3)")
        assert rows_per_node(inst) == [3, 3]
        inst.restore(tmp_path / "snap")
        assert rows_per_node(inst) == [2, 2] and inst.alive()
        assert inst.cache().resize(96 << 20)["innodb_buffer_pool_size"] == 96 << 20
        for node in inst.nodes:
            conn = node._connect()
            cur = conn.cursor()
            cur.execute("SELECT @@GLOBAL.innodb_buffer_pool_size")
            assert cur.fetchone()[0] == 96 << 20, node.node_name
            conn.close()
    finally:
        inst.destroy()

"""The replication transport axis of the galera engine (``transport=tls``): certificates made per cluster (0600
in a 0700 directory, gone with the cluster), every node replicating over TLS, the ``replication`` threat row, the
labels of the variant, and the wire itself: a row written on node 1 crosses to node 2 in clear without TLS and
is not found in the bytes between the nodes with it (loopback read with a raw socket; needs root)."""

from __future__ import annotations

import os
import socket
import stat
import struct
import threading
import time
from pathlib import Path

import pytest

from tdebench.encryption import PLAIN, parse_spec
from tdebench.engines import Config, get_engine
from tdebench.engines.mariadb.galera_rejoin import transfer_kind
from tdebench.errors import UsageError
from tdebench.verify.threat_checks import replication_transport_rows
from tests.availability import engine_missing
from tests.instances import run_sql

_MISSING = engine_missing("galera")
needs_galera = pytest.mark.skipif(bool(_MISSING), reason=_MISSING or "available")


def test_a_bad_transport_is_refused():
    with pytest.raises(UsageError, match="unknown replication transport 'ssl'"):
        get_engine("galera").validate_settings({"nodes": "2", "transport": "ssl"})


def test_the_variant_names_the_configs(tmp_path):
    from tdebench.cli.run import plan_from_experiment
    from tdebench.config import validate_experiment

    sections = [{"name": "galera", "encryption": ["none", "tde:aes-256-ctr"], "settings": {"nodes": 2}},
                {"name": "galera", "encryption": ["none", "tde:aes-256-ctr"],
                 "settings": {"nodes": 2, "transport": "tls"}}]
    plan = plan_from_experiment(validate_experiment({"run": {"workload": "tpcc"}, "engines": sections}, "test"))
    assert plan.labels == ["galera-none", "galera-tde-aes-256-ctr", "galera-none-tls", "galera-tde-aes-256-ctr-tls"]


class Sniffer:
    """Payload bytes of TCP segments on the loopback interface to or from ``ports`` (AF_PACKET, root only)."""

    def __init__(self, ports: set[int]) -> None:
        self.ports, self.data, self.stop = ports, bytearray(), threading.Event()
        self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.ntohs(0x0003))
        self.sock.bind(("lo", 0))
        self.sock.settimeout(0.2)
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.stop.is_set():
            try:
                frame = self.sock.recv(65535)
            except socket.timeout:
                continue
            if len(frame) < 34 or frame[12:14] != b"\x08\x00" or frame[23] != 6:
                continue
            ip = (frame[14] & 0x0F) * 4
            src, dst = struct.unpack("!HH", frame[14 + ip:18 + ip])
            if src in self.ports or dst in self.ports:
                self.data += frame[14 + ip + (frame[26 + ip] >> 4) * 4:]

    def close(self) -> bytes:
        self.stop.set()
        self.thread.join()
        self.sock.close()
        return bytes(self.data)


def _wire_bytes(inst, canary: str) -> bytes:
    """Insert ``canary`` on node 1, read it back on node 2 (causal read), with the loopback sniffed meanwhile."""
    ports = {p for n in inst.nodes for p in (n.ports[n.index].galera, n.ports[n.index].ist)}
    sniffer = Sniffer(ports)
    try:
        run_sql(inst, "CREATE TABLE wire (id INT PRIMARY KEY, note VARCHAR(100))",
                ("INSERT INTO wire VALUES (1, %s)", [canary]))
        other = inst.connect_node(1, causal=True)
        cur = other.cursor()
        cur.execute("SELECT note FROM wire")
        assert cur.fetchall() == ((canary,),)
        other.close()
        time.sleep(0.5)
    finally:
        captured = sniffer.close()
    return captured


@pytest.mark.server
@needs_galera
@pytest.mark.skipif(os.geteuid() != 0, reason="reading the loopback interface needs root")
@pytest.mark.parametrize("spec, transport", [("none", "plain"), ("tde:aes-256-ctr", "tls")])
def test_the_rows_cross_between_the_nodes_in_clear_only_without_tls(spec, transport, tmp_path):
    engine = get_engine("galera")
    settings = {**engine.default_settings(), "nodes": "2", "transport": transport}
    inst = engine.create_instance(Config("galera", parse_spec(spec), settings), tmp_path)
    canary = f"wire-canary-{os.getpid()}-{transport}"
    try:
        inst.start()
        tls = inst.tls
        if transport == "tls":
            assert tls is not None and sorted(p.name for p in tls.directory.iterdir()) == [
                "ca.pem", "node-cert.pem", "node-key.pem"]  # no CA key on disk
            assert stat.S_IMODE(tls.directory.stat().st_mode) == 0o700
            assert all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in tls.directory.iterdir())
            if inst.user is not None:
                assert {p.stat().st_uid for p in tls.directory.iterdir()} == {inst.user.pw_uid}
        status = inst.cluster_status()
        assert {s["status"]["wsrep_local_state_comment"] for s in status.values()} == {"Synced"}
        assert {s["replication_tls"] for s in status.values()} == {"YES" if transport == "tls" else "NO"}
        [row] = replication_transport_rows(inst.threats())
        assert row.status == ("protected" if transport == "tls" else "exposed"), row
        wire = _wire_bytes(inst, canary)
        assert len(wire) > 0  # the nodes did talk
        assert (canary.encode() in wire) == (transport == "plain")
    finally:
        inst.destroy()
    if transport == "tls":
        assert not tls.directory.exists()


@pytest.mark.parametrize("label", ["galera-none", "galera-tde-aes-256-ctr-tls", "galera-tde-aes-128-cbc-tables-tls",
                                   "x" * 80])
def test_cluster_names_fit_gcomm(label):
    from tdebench.engines.mariadb.galera_settings import cluster_name

    name = cluster_name(label)
    assert len(name) <= 32 and name.startswith("tdebench-")
    assert cluster_name(label) == name and (len(f"tdebench-{label}") > 32 or name == f"tdebench-{label}")


@pytest.mark.server
@needs_galera
def test_a_mariabackup_state_transfer_goes_over_tls_too(tmp_path):
    engine = get_engine("galera")
    settings = {**engine.default_settings(), "nodes": "2", "transport": "tls", "sst": "mariabackup"}
    inst = engine.create_instance(Config("galera", PLAIN, settings), tmp_path)
    try:
        inst.start()
        joiner = inst.nodes[1].log_path.read_text(errors="replace")
        assert "Using openssl based encryption with socat" in joiner and transfer_kind(joiner) == "SST"
        assert "encrypted (TLS" in inst.threats().replication_cache()["transfer"]
        assert "mariabackup SST stream too" in inst.threats().transport_security()["replication"]["what"]
    finally:
        inst.destroy()


@pytest.mark.server
@needs_galera
def test_a_node_of_a_tls_cluster_rejoins_by_ist_over_tls(tmp_path):
    engine = get_engine("galera")
    settings = {**engine.default_settings(), "nodes": "3", "transport": "tls"}
    inst = engine.create_instance(Config("galera", PLAIN, settings), tmp_path)
    try:
        inst.start()
        conn = inst.connect()
        cur = conn.cursor()
        cur.execute("CREATE TABLE r (id INT PRIMARY KEY)")
        cur.execute("INSERT INTO r VALUES (-1)")
        conn.commit()
        # node 3 applies write sets asynchronously: once it has applied a commit, InnoDB holds a position it can
        # recover after the kill (without one it asks for a whole SST, as CI once saw)
        third = inst.connect_node(2, causal=True)
        third.cursor().execute("SELECT COUNT(*) FROM r")
        third.close()
        inst.cluster().kill_node(3)
        assert inst.alive()  # the others serve on
        cur.executemany("INSERT INTO r VALUES (%s)", [(i,) for i in range(100)])
        conn.commit()
        conn.close()
        facts = inst.cluster().rejoin_node(3)
        assert facts["transfer"] == "IST" and facts["seconds_to_synced"] > 0, facts
        assert "ssl://" in inst.nodes[2].log_path.read_text(errors="replace")
        other = inst.connect_node(2, causal=True)
        cur = other.cursor()
        cur.execute("SELECT COUNT(*) FROM r")
        assert cur.fetchone()[0] == 101
        other.close()
    finally:
        inst.destroy()

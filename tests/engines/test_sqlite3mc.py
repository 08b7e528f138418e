"""The sqlite3mc engine beyond the conformance kit: RC4 and unknown ciphers refused in one line before any work, the
AEGIS variants really differ, and the encrypted twin's WAL and spill files hold none of the canaries that the plain
twin's hold (real SQLite3MC databases)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("apsw")

from tdebench.encryption import parse_spec  # noqa: E402
from tdebench.engines import Config, get_engine  # noqa: E402
from tdebench.engines.toolkit.sqlitefile import sqlite_temp_dir  # noqa: E402

SRC = str(Path(__file__).resolve().parents[2] / "src")
MARKERS = [f"tdbcanary-{i}-9d1e7c3b2a" for i in range(4)]


def _tdebench(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.run([sys.executable, "-m", "tdebench", *args], capture_output=True, text=True, env=env,
                          timeout=120)


@pytest.mark.parametrize("spec, fragment", [
    ("sqlite3mc:rc4", "RC4 is broken"),
    ("sqlite3mc:nosuch", "unknown cipher 'nosuch'"),
    ("sqlite3mc:aes-192-cbc", "does not support encryption 'sqlite3mc:aes-192-cbc'"),
])
def test_bad_specs_exit_2_in_one_line(spec, fragment, tmp_path):
    done = _tdebench("run", "--engine", "sqlite3mc", "--encryption", f"none,{spec}", "--out", str(tmp_path / "r"))
    assert done.returncode == 2, done.stderr
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and fragment in lines[0] and "fix:" in lines[0] and "Traceback" not in done.stderr
    assert not (tmp_path / "r").exists()


def _instance(text: str, tmp_path: Path, settings: dict[str, str]):
    engine = get_engine("sqlite3mc")
    inst = engine.create_instance(Config("sqlite3mc", parse_spec(text), settings), tmp_path / text.replace(":", "-"))
    inst.start()
    return inst


def test_aegis_variants_are_the_algorithms_asked_for(tmp_path):
    for variant in ("aegis-128l", "aegis-256x4"):
        inst = _instance(f"sqlite3mc:{variant}", tmp_path, {})
        try:
            inst.plant_canaries(MARKERS)
            assert inst.settings()["aegis_algorithm"] == variant
        finally:
            inst.destroy()


@pytest.mark.parametrize("text", ["none", "sqlite3mc:chacha20", "sqlite3mc:aegis", "sqlite3mc:aes-256-cbc"])
def test_wal_holds_canaries_only_when_plain(text, tmp_path):
    inst = _instance(text, tmp_path, {"journal_mode": "wal"})
    keep = inst.connect()  # a reader's open transaction keeps the WAL from being checkpointed away on close
    try:
        keep.cursor().execute("BEGIN")
        keep.cursor().execute("SELECT COUNT(*) FROM sqlite_master").fetchall()
        inst.plant_canaries(MARKERS)
        wal = [p for p in inst.data_dir.glob("*-wal") if p.stat().st_size]
        assert wal
        assert (MARKERS[0].encode() in wal[0].read_bytes()) is (text == "none")
    finally:
        keep.rollback()
        keep.close()
        inst.destroy()


def _open_spill_bytes() -> bytes:
    """What the unlinked temporary files this process holds open contain."""
    out = b""
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.endswith(" (deleted)") and target.startswith(str(sqlite_temp_dir())):
            with open(f"/proc/self/fd/{fd}", "rb") as handle:
                out += handle.read()
    return out


@pytest.mark.parametrize("text", ["none", "sqlite3mc:chacha20", "sqlite3mc:sqlcipher"])
def test_spill_files_hold_canaries_only_when_plain(text, tmp_path):
    inst = _instance(text, tmp_path, {"temp_store": "file"})
    try:
        inst.plant_canaries(MARKERS)
        with inst.threats().spill_probe(MARKERS) as probe:
            assert "in_memory" not in probe
            data = _open_spill_bytes()
            assert data, "the sort should have spilled to a temporary file"
            assert (MARKERS[2].encode() in data) is (text == "none")
    finally:
        inst.destroy()

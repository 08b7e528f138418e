"""End to end on a real MariaDB (1 warehouse, phases of 1 s, 1 trial) and PostgreSQL: switching filesystem
encryption on by doing it (the server stopped, its data directory copied into an fscrypt directory or a gocryptfs
mount, pointed at, started again; the old copy scanned, then deleted; and the way back). Nothing is left running or
mounted. TDE's plaintext start and its restarts: tests/e2e/test_encrypt_e2e.py."""

from __future__ import annotations

import csv
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tdebench.cli.app import main
from tdebench.stats.switching import mechanism_costs

pytestmark = pytest.mark.slow(seconds=90)  # two configs, one trial each, on a loaded machine

HAVE_MARIADB = Path("/usr/sbin/mariadbd").exists() or shutil.which("mariadbd") is not None
FS = ("mariadb-fs-fscrypt", "mariadb-fs-gocryptfs")


def _rows(run: Path) -> dict[tuple[str, str, str, str], float]:
    with open(run / "measurements.csv", newline="") as handle:
        return {(r["config"], r["test"], r["step"], r["metric"]): float(r["value"]) for r in csv.DictReader(handle)
                if r["status"] == "ok"}


def _can_run_fs() -> str:
    from tdebench.engines.toolkit import fscrypt, fsencrypt

    try:
        fscrypt.check_available()
        fsencrypt.check_available()
    except Exception as exc:  # noqa: BLE001 - not here: the reason is the skip's
        return str(exc)
    return ""


@pytest.fixture(scope="module")
def switched(tmp_path_factory, tpcc_w1) -> Path:
    if not HAVE_MARIADB:
        pytest.skip("mariadb-server is not installed")
    if _can_run_fs():
        pytest.skip(_can_run_fs())
    tmp = tmp_path_factory.mktemp("encrypt-fs")
    run = tmp / "run"
    with pytest.raises(SystemExit) as code:
        # phases of 1 s without ramp-up, one virtual user (as test_encrypt_offline.py): what is checked is the switch
        main(["run", "--engine", "mariadb", "--encryption", "fs:fscrypt,fs:gocryptfs",
              "--workload", "encrypt", "--warehouses", "1", "--workload-option", "steady=1s",
              "--workload-option", "rampup=0", "--workload-option", "vus=1",
              "--server-setting", "innodb_log_file_size=48M", "--server-setting", "innodb_buffer_pool_size=128M",
              "--trials", "1", "--warmup", "0", "--out", str(run), "--data-dir", str(tpcc_w1[0].parent),
              "--work-dir", str(tmp / "work")])
    assert code.value.code == 0, (run / "manifest.json").read_text()
    return run


def test_fs_layers_switch_offline_by_a_copy(switched: Path):
    found = _rows(switched)
    for config in FS:
        on = {m: v for (c, t, s, m), v in found.items() if (c, t, s) == (config, "encrypt", "offline.on")}
        assert on["downtime"] == on["time_to_done"] > 0 and on["copy_seconds"] > 0, on
        assert on["copy_bytes_per_s"] == pytest.approx(on["copied_bytes"] / on["copy_seconds"])
        assert on["copied_bytes"] > 50e6  # the data directory: TPC-C's tables and InnoDB's own files
        assert on["peak_extra_bytes"] > 0.5 * on["copied_bytes"]  # both copies at once
        assert on["removed_bytes"] > 0.5 * on["copied_bytes"] and on["wipe_seconds"] >= 0
        # the new place holds no plaintext; the old copy held all of it until it was deleted (a finding)
        new = {m: v for (c, t, s, m), v in found.items() if (c, t, s) == (config, "encrypt", "offline.on.scan")}
        old = {m: v for (c, t, s, m), v in found.items()
               if (c, t, s) == (config, "encrypt", "offline.on.old_copy.scan")}
        assert new["canary_hits_in_scope"] == 0 and new["known_plaintext_hits_in_scope"] == 0, new
        assert old["canary_hits_in_scope"] > 0 and old["known_plaintext_hits_in_scope"] > 0, old
        assert found[(config, "encrypt", "offline.off", "downtime")] > 0  # and back out
        assert found[(config, "encrypt", "offline.after_off", "tpm")] > 0  # serving from the plaintext place again
        assert (config, "encrypt", "offline.rekey", "time_to_done") not in found  # no re-keying of existing files


def test_a_decision_reads_every_mechanism_back(switched: Path):
    costs = {c.config: c for c in mechanism_costs(switched)}
    assert set(costs) == set(FS)
    for config in FS:
        fs = costs[config]
        assert not fs.online and fs.downtime_s == fs.time_to_done_s and fs.peak_extra_disk_bytes
        assert fs.copy_bytes_per_s and fs.plaintext_left == 0 and fs.old_copy_plaintext and not fs.resolved
        assert fs.method.startswith("fs:* (offline)")  # the manifest's switching fact
    with open(switched / "report" / "switching.csv", newline="") as handle:
        table = list(csv.DictReader(handle))
    assert [(r["config"], r["action"]) for r in table] == [(c, a) for c in FS for a in ("on", "off")]
    assert all(r["ratios_resolved"] == "false" and float(r["downtime_s"]) > 0 for r in table)  # one trial
    summary = (switched / "report" / "summary.md").read_text()
    assert "(not resolved)" in summary and "median of 1 trial" in summary


@pytest.mark.heavy  # a switch by a copy into both layers in the default suite: test_fs_layers_switch_offline_by_a_copy
@pytest.mark.slow(seconds=60)
@pytest.mark.skipif(not any(Path("/usr/lib/postgresql").glob("*/bin/postgres")), reason="postgresql is not installed")
def test_postgres_pgdata_switches_into_gocryptfs_by_a_copy(tmp_path, tpcc_w1):
    if _can_run_fs():
        pytest.skip(_can_run_fs())
    run = tmp_path / "run"
    with pytest.raises(SystemExit) as code:
        main(["run", "--engine", "postgres", "--encryption", "fs:gocryptfs", "--workload", "encrypt",
              "--warehouses", "1", "--workload-option", "steady=2s", "--workload-option", "rampup=1s",
              "--trials", "1", "--warmup", "0", "--out", str(run), "--data-dir", str(tpcc_w1[0].parent),
              "--work-dir", str(tmp_path / "work")])
    assert code.value.code == 0, (run / "manifest.json").read_text()
    found, config = _rows(run), "postgres-fs-gocryptfs"
    assert found[(config, "encrypt", "offline.on", "downtime")] > 0
    assert found[(config, "encrypt", "offline.on", "copied_bytes")] > 30e6  # pgdata: tables, WAL
    assert found[(config, "encrypt", "offline.on.scan", "canary_hits_in_scope")] == 0
    assert found[(config, "encrypt", "offline.on.old_copy.scan", "canary_hits_in_scope")] > 0
    assert found[(config, "encrypt", "offline.after_off", "tpm")] > 0
    _nothing_left([str(tmp_path)], _instance_roots(run, (config,)))


def _instance_roots(run: Path, labels: tuple[str, ...]) -> set[str]:
    """The instances' top directories, from the data directories the switches report (relocated under /var/tmp
    when the work directory is closed to the server's user: ``tdebench-inst-<label>-…``, ``tdebench-<label>-…``)."""
    roots = set()
    for facts in run.glob("samples/*/encrypt-block*.json"):
        for switch in json.loads(facts.read_text())["switches"]:
            for path in [switch["applied"].get("datadir", ""), *switch["applied"].get("old_copy", [])]:
                parts = Path(path).parts
                cut = next((i for i, p in enumerate(parts) if p in labels or any(
                    p.startswith(f"tdebench-{prefix}{label}-") for label in labels for prefix in ("", "inst-"))),
                           None)
                if cut is not None:
                    roots.add(str(Path(*parts[:cut + 1])))
    return roots


def test_nothing_is_left_running_or_mounted(switched: Path):
    roots = _instance_roots(switched, FS)
    assert len(roots) == len(FS), roots
    _nothing_left([str(switched.parent / "work")], roots)


def _nothing_left(places: list[str], roots: set[str]) -> None:
    """No process, mount or loop device below ``places`` and the instances' ``roots``; the roots deleted."""
    for root in [*places, *roots]:
        left = subprocess.run(["pgrep", "-f", root], capture_output=True, text=True).stdout.split()
        assert not left, f"processes left running: {left}"
        assert root not in Path("/proc/mounts").read_text(), root
        assert not any(root in backing.read_text() for backing in Path("/sys/block").glob("loop*/loop/backing_file"))
        assert root in places or not Path(root).exists(), root

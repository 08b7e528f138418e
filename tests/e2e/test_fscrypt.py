"""fs:fscrypt end to end: real SQLite, SQLite3MC, DuckDB, MariaDB and PostgreSQL runs on loop-mounted ext4 images (TPC-H SF 0.01, one trial), the
at-rest verdicts read from the image files, and nothing left behind -- no mount, no loop device, no fscrypt key --
after a finished run, a Ctrl-C during provisioning or measurement, and a SIGKILL followed by `tdebench cleanup`.

Needs root and loop devices (skipped elsewhere). The runs' work directories live in a private TMPDIR, so what is
left is told apart from other users of the machine.
"""

from __future__ import annotations

import json
import mmap
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tdebench.engines.toolkit import memcap
from tdebench.engines.toolkit.fscrypt import loop_devices
from tests.e2e import examples as ex
from tests.fscrypt_keys import assert_no_key_left, fscrypt_keys
from tests.interruptible import default_sigint, stop_and_clean

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0 or not Path("/dev/loop-control").exists(),
                       reason="fs:fscrypt needs root and loop devices"),
    pytest.mark.slow(seconds=440),  # a measured run of the whole module, loaded machine
]
HAS_MARIADB = bool(shutil.which("mariadbd") or Path("/usr/sbin/mariadbd").exists())
HAS_POSTGRES = Path("/usr/lib/postgresql").is_dir()


def mounts_under(root: Path) -> list[str]:
    return [line.split()[1] for line in Path("/proc/mounts").read_text().splitlines()
            if line.split()[1].startswith(str(root))]


#: the runs each sandbox's test started (by sandbox), stopped and cleaned up after the test
STARTED: dict[Path, list[subprocess.Popen[str]]] = {}


@pytest.fixture
def sandbox():
    """A private TMPDIR (work directories), an ownership-state dir, and the fscrypt keys before the test; after it,
    whatever its runs left (a failed test's too) is stopped, unmounted and detached."""
    base = Path(tempfile.mkdtemp(prefix="t-fscrypt-", dir="/var/tmp"))
    os.chmod(base, 0o755)  # the MariaDB server's user must traverse it
    (base / "tmp").mkdir(mode=0o777)
    os.chmod(base / "tmp", 0o1777)
    keys = fscrypt_keys()
    STARTED[base] = []
    yield base, keys
    stop_and_clean(STARTED.pop(base), base / "state")
    for point in sorted(mounts_under(base), key=len, reverse=True):
        subprocess.run(["umount", "-l", point], check=False)
    for device, _ in loop_devices([str(base)]):
        subprocess.run(["losetup", "-d", device], check=False)
    shutil.rmtree(base, ignore_errors=True)


def start(base: Path, args: list[str], out: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "TMPDIR": str(base / "tmp"),
           "XDG_STATE_HOME": str(base / "state"), "COLUMNS": "200"}
    proc = subprocess.Popen([sys.executable, "-m", "tdebench", "run", *args, "--out", str(out)], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, cwd=base,
                            preexec_fn=default_sigint)
    STARTED[base].append(proc)
    return proc


def direct_io_possible(directory: Path) -> bool:
    """Whether the filesystem holding ``directory`` (where the images live) takes an O_DIRECT write."""
    probe = directory / ".direct-io-probe"
    try:
        fd = os.open(probe, os.O_CREAT | os.O_WRONLY | os.O_DIRECT, 0o600)
    except OSError:
        return False
    try:
        buffer = mmap.mmap(-1, 4096)  # page-aligned, as O_DIRECT wants
        os.write(fd, buffer)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
        probe.unlink(missing_ok=True)


def assert_nothing_left(base: Path, keys_before: set[str]) -> None:
    assert not mounts_under(base), mounts_under(base)
    assert not loop_devices([str(base)]), loop_devices([str(base)])
    assert_no_key_left(base, keys_before)
    assert not [p for p in (base / "tmp").iterdir() if p.name.startswith("tdebench-")], list((base / "tmp").iterdir())
    records = list((base / "state").rglob("*.json")) if (base / "state").exists() else []
    assert not records, [r.read_text() for r in records]


def check_verification(out: Path, engine: str) -> None:
    configs = json.loads((out / "verification.json").read_text())["configs"]
    plain, enc = configs[f"{engine}-none"], configs[f"{engine}-fs-fscrypt"]
    # the plain twin's image holds the canaries in its raw blocks: the scanner sees through a plain ext4 image
    assert plain["passed"] and plain["marker_hits"] > 0 and plain["files_with_hits"] == ["ext4.img"]
    assert plain["status"]["filesystem"]["policy_version"] is None
    # no memory ratio: the loop devices stay buffered (loads and shutdowns fast), the same on both images
    assert plain["status"]["filesystem"]["loop_direct_io"] is enc["status"]["filesystem"]["loop_direct_io"] is False
    # the encrypted twin's image holds neither canary nor known plaintext
    assert enc["passed"] and enc["encrypted_on_disk"] and enc["marker_hits"] == 0
    assert enc["known_plaintext_hits"] == 0 and enc["files_scanned"] == 1 and enc["files"][0]["path"] == "ext4.img"
    fs = enc["status"]["filesystem"]
    assert enc["status"]["enabled"] and fs["policy_version"] == 2 and fs["key_status"] == "present"
    assert (fs["contents_mode"], fs["filenames_mode"]) == (1, 4)  # AES-256-XTS, AES-256-CTS
    rows = {r["id"]: r["status"] for r in enc["threats"]["rows"]}
    assert rows["data_dir"] == "protected" and rows["live_host"] == "exposed"  # the unlocked mount hands them out
    # the image holds no plaintext, but a setup that mounts it unattended keeps the master key on the host
    assert rows["disk"] == "exposed" and rows["host_keys"] == "exposed"
    assert plain["threats"]["rows"][0]["status"] == "exposed"
    assert all(c["answers_equal"] is not False for c in configs.values())
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["status"] == "completed"


@pytest.mark.parametrize("engine", [
    "sqlite", "sqlite3mc", "duckdb",
    # heavy: MariaDB in fs:fscrypt in the default suite: test_ctrl_c_leaves_no_mount_loop_device_or_key below
    # (provisioned, loaded and verified, then interrupted while measuring), test_encrypt_fs.py (switched into it and
    # scanned); a completed run's verification of fs:fscrypt: the other four engines here
    pytest.param("mariadb", marks=[pytest.mark.server, pytest.mark.heavy,
                                   pytest.mark.skipif(not HAS_MARIADB, reason="no mariadbd")]),
    pytest.param("postgres", marks=[pytest.mark.server, pytest.mark.skipif(not HAS_POSTGRES, reason="no postgres")])])
def test_run_none_vs_fscrypt(sandbox, engine, tpch_sf001):
    base, keys = sandbox
    out = base / "run"
    # no report: what is checked is the verification and what is left behind (test_layers_example reads one);
    # two queries (a scan of lineitem, a join with a sort) answered on both twins: every engine's 22 answers are
    # the conformance kit's (tests/engines/kit.py), whatever filesystem holds the files
    proc = start(base, ["--engine", engine, "--encryption", "none,fs:fscrypt", "--sf", "0.01", "--trials", "1",
                        "--warmup", "0", "--no-report", "--workload-option", "queries=1,18",
                        "--data-dir", str(Path(tpch_sf001[0]).parent)], out)
    log, _ = proc.communicate(timeout=900)
    assert proc.returncode == 0, log[-3000:]
    check_verification(out, engine)
    assert_nothing_left(base, keys)


# the runs interrupted below answer two queries (a scan of lineitem, a join with a sort) in each of their 20
# trials: what is checked is what the signal leaves behind, and the run is still measuring when it comes
INTERRUPTED_QUERIES = ("--workload-option", "queries=1,18")


def _wait_for(proc: subprocess.Popen[str], ready, timeout: float = 300.0) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        assert proc.poll() is None, proc.stdout.read()[-3000:] if proc.stdout else ""
        assert time.monotonic() < deadline, "the run never reached the point to interrupt"
        time.sleep(0.05)


def _measuring(out: Path) -> bool:
    """A measured trial's rows are in the results (block 1 and later)."""
    try:
        lines = (out / "measurements.csv").read_text().splitlines()[1:]
    except OSError:
        return False
    return any(line.split(",")[1] not in ("0", "block") for line in lines)


@pytest.mark.parametrize("engine", [
    "sqlite",
    pytest.param("mariadb", marks=[pytest.mark.server, pytest.mark.skipif(not HAS_MARIADB, reason="no mariadbd")])])
@pytest.mark.parametrize("when", ["provisioning", "measurement"])
def test_ctrl_c_leaves_no_mount_loop_device_or_key(sandbox, when, engine, tpch_sf001):
    base, keys = sandbox
    out = base / "run"
    proc = start(base, ["--engine", engine, "--encryption", "none,fs:fscrypt", "--sf", "0.01", "--trials", "20",
                        "--warmup", "0", *INTERRUPTED_QUERIES, "--data-dir", str(Path(tpch_sf001[0]).parent)], out)
    if when == "provisioning":  # the first image is mounted: provisioning is under way
        log = signal_when(proc, lambda: bool(mounts_under(base)), signal.SIGINT)
    else:  # both images mounted and unlocked
        log = signal_when(proc, lambda: _measuring(out), signal.SIGINT, lambda: len(mounts_under(base)) == 2
                          and len(loop_devices([str(base)])) == 2 and bool(fscrypt_keys() - keys))
    assert proc.returncode == 130, log[-3000:]
    assert_nothing_left(base, keys)


def signal_when(proc: subprocess.Popen[str], ready, sig: signal.Signals, state=lambda: True) -> str:
    """Once ``ready()``, check ``state()`` (what must hold at that point), send ``sig`` to the run and return its
    output after it exited (killed if it outlives 90 s)."""
    try:
        _wait_for(proc, ready)
        assert state(), "not in the state to interrupt"
        proc.send_signal(sig)
        log, _ = proc.communicate(timeout=90)
    finally:
        if proc.poll() is None:
            proc.kill()
    return log


def kill_while_measuring(proc: subprocess.Popen[str], out: Path) -> None:
    """SIGKILL the run once a measured trial's rows are in ``out``."""
    signal_when(proc, lambda: _measuring(out), signal.SIGKILL)


def test_killed_run_is_cleaned_up(sandbox, tpch_sf001):
    """SIGKILL leaves the images mounted, unlocked and attached; `tdebench cleanup` unmounts and detaches them."""
    base, keys = sandbox
    out = base / "run"
    kill_while_measuring(start(base, ["--encryption", "none,fs:fscrypt", "--sf", "0.01", "--trials", "20", "--warmup",
                                      "0", *INTERRUPTED_QUERIES, "--data-dir", str(Path(tpch_sf001[0]).parent)], out),
                         out)
    assert len(mounts_under(base)) == 2 and len(loop_devices([str(base)])) == 2
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src"), "XDG_STATE_HOME": str(base / "state")}
    listing = subprocess.run([sys.executable, "-m", "tdebench", "cleanup", "--dry-run"], env=env,
                             capture_output=True, text=True, timeout=60)
    assert "/dev/loop" in listing.stdout, listing.stdout + listing.stderr
    result = subprocess.run([sys.executable, "-m", "tdebench", "cleanup"], env=env, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert_nothing_left(base, keys)


@pytest.mark.heavy  # 13 configs; each layer of each engine runs in the default suite (test_run_none_vs_fscrypt,
# MariaDB's in the Ctrl-C test and test_encrypt_fs, the gocryptfs and sqlite3mc tests), the layers table in its unit
# test (tests/unit/test_layers.py)
@pytest.mark.server
@pytest.mark.skipif(not (HAS_MARIADB and HAS_POSTGRES and shutil.which("gocryptfs")),
                    reason="needs mariadbd, PostgreSQL and gocryptfs")
def test_layers_example(sandbox, tpch_sf001):
    """docs/examples/layers.toml at SF 0.01, one trial: every layer verified at rest, the layers table in the report
    with sqlite3mc's configs against the stated baseline sqlite-none and its library note; nothing left behind."""
    base, keys = sandbox
    copy = ex.sized_copy(ex.example("layers"), base, sf=0.01, trials=1)
    out = base / "run"
    proc = start(base, [str(copy), "--warmup", "0", "--data-dir", str(Path(tpch_sf001[0]).parent)], out)
    log, _ = proc.communicate(timeout=1800)
    assert proc.returncode == 0, log[-3000:]
    ex.check_example_run(out)
    configs = json.loads((out / "verification.json").read_text())["configs"]
    assert len(configs) == 13 and all(c["passed"] for c in configs.values())
    for label, entry in configs.items():
        plain = label.split("@")[0].split("-", 1)[1] == "none"
        assert entry["encrypted_on_disk"] != plain and (entry["marker_hits"] > 0) == plain, label
    manifest = json.loads((out / "manifest.json").read_text())
    assert {c["settings"]["storage"] for c in manifest["configs"]} == {"ext4-loop"}  # one kind of filesystem
    applied = {label: r["applied"]["os_page_cache"] for label, r in manifest["memory"]["regimes"].items()}
    # InnoDB's O_DIRECT keeps the plain and TDE twins' misses off the page cache; under fscrypt and gocryptfs it
    # cannot, so a memory cgroup bounds that twin's page cache instead of letting it read from memory
    assert applied["mariadb-none@mem0.25"].startswith("bypassed") and applied["mariadb-tde-aes-256-ctr@mem0.25"].startswith("bypassed")
    bound = "not bounded (" if memcap.unavailable() else "bounded ("
    assert applied["mariadb-fs-fscrypt@mem0.25"].startswith(f"{bound}ext4 encryption serves O_DIRECT as buffered")
    assert applied["mariadb-fs-gocryptfs@mem0.25"].startswith(f"{bound}gocryptfs")
    # at a memory ratio every image's loop device reads its file with O_DIRECT: the host caches no copy of it
    regimes = manifest["memory"]["regimes"]
    assert {r["applied"]["loop_direct_io"] for label, r in regimes.items()
            if label.startswith(("mariadb", "postgres"))} == {direct_io_possible(base)}
    if bound == "bounded (":  # the gocryptfs daemon shares the group: its Go heap is held to its share
        assert regimes["mariadb-fs-gocryptfs@mem0.25"]["applied"]["gocryptfs_go_memory_limit_bytes"] == 24 << 20
    md = (out / "report" / "summary.md").read_text()
    assert "## Layers: cost and protection" in md and "vs baseline sqlite-none (95% CI)" in md
    assert "| postgres-fs-gocryptfs@mem0.25 | FUSE filesystem (gocryptfs) |" in md
    assert "| mariadb-fs-gocryptfs@mem0.25 | FUSE filesystem (gocryptfs) |" in md  # all three layers of one engine
    assert "sqlite3mc's configs run SQLite 3.54" in md and "sqlite3mc-none@mem0.25 (no encryption) shows alone" in md
    assert_nothing_left(base, keys)
    groups = [p for p in Path("/sys/fs/cgroup").rglob(f"tdebench-{proc.pid}-*") if p.is_dir()]
    assert not groups, groups  # every memory cgroup of the run removed (the gocryptfs daemon was a member too)


@pytest.mark.parametrize("engine", [
    "sqlite",
    # heavy: backups under an encrypted filesystem in the default suite: the SQLite case above; MariaDB's backup
    # kinds under TDE: tests/e2e/test_backup.py
    pytest.param("mariadb", marks=[pytest.mark.server, pytest.mark.heavy,
                                   pytest.mark.skipif(not HAS_MARIADB, reason="no mariadbd")])])
def test_backups_under_fscrypt(sandbox, engine, tpch_sf001):
    """The backup workload on an fs:fscrypt twin: every kind backs up and restores; the backups land in the run's
    work directory, outside the encrypted image, so they are plaintext at rest and the threat model says so; the
    restored database is back inside the encrypted directory (the kept image holds no TPC-H text)."""
    from tdebench.verify.atrest import count_in_file

    base, keys = sandbox
    out, work = base / "run", base / "work"
    work.mkdir(mode=0o755)
    proc = start(base, ["--workload", "backup", "--engine", engine, "--encryption", "none,fs:fscrypt", "--sf", "0.01",
                        "--trials", "1", "--warmup", "0", "--keep", "--work-dir", str(work),
                        "--data-dir", str(Path(tpch_sf001[0]).parent)], out)
    log, _ = proc.communicate(timeout=900)
    assert proc.returncode == 0, log[-3000:]
    backups = json.loads((out / "backups.json").read_text())["configs"][f"{engine}-fs-fscrypt"]["backups"]
    assert len(backups) >= 2
    for kind, verdict in backups.items():
        assert verdict["encrypted"] is False and verdict["marker_hits"] > 0, kind
        assert verdict["location"].startswith("the run's work directory, outside"), kind
    rows = json.loads((out / "verification.json").read_text())["configs"][f"{engine}-fs-fscrypt"]["threats"]["rows"]
    backup_rows = [r for r in rows if r["id"].startswith("backups:")]
    assert backup_rows and all(r["status"] == "exposed" and "written to the run's work directory" in r["summary"]
                               for r in backup_rows)
    images = {next(part for part in p.relative_to(work).parts if part.startswith(f"{engine}-")): p
              for p in work.rglob("ext4.img")}  # kept, unmounted and locked
    assert set(images) == {f"{engine}-none", f"{engine}-fs-fscrypt"}, images
    word = b"blithely"  # TPC-H comment text, in every table's restored rows
    assert count_in_file(images[f"{engine}-none"], [word])[word.decode()] > 0
    assert count_in_file(images[f"{engine}-fs-fscrypt"], [word])[word.decode()] == 0
    assert not mounts_under(base) and not loop_devices([str(base)])
    assert_no_key_left(base, keys)

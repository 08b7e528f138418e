"""Secret hygiene on every engine available: no key, password or file key in the run directory, the logs,
error messages, or any process's command line or environment; key files 0600 in 0700 directories.

Runs go through the real CLI in this process (``main(argv)``), so the secrets it generated are known
(:func:`tdebench.encryption.issued_secrets`) while a watcher thread inspects the server processes, their
listening sockets (see test_exposure.py) and the key files as the run goes.
"""

from __future__ import annotations

import functools
import os
import shutil
import stat
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import pytest

from tdebench.cli.app import main
from tdebench.encryption import issued_secrets
from tdebench.engines.toolkit.exposure import files_holding, files_on_disk
from tdebench.proctree import descendants

pytestmark = pytest.mark.slow(seconds=150)  # three watched runs (SQLite, MariaDB, PostgreSQL), loaded machine
SECRET_NAMES = ("key", "pass", "secret", "pwfile")
LOOPBACK = {"127.0.0.1"}
SERVER_NAMES = ("mariadbd", "mysqld", "postgres", "gocryptfs")


def _have_mariadb() -> bool:
    return bool(shutil.which("mariadbd") or Path("/usr/sbin/mariadbd").exists())


def _have_postgres() -> bool:
    return Path("/usr/lib/postgresql").is_dir() or bool(shutil.which("pg_config"))


def _have_gocryptfs() -> bool:
    return bool(shutil.which("gocryptfs")) and Path("/dev/fuse").exists()


# name -> (run arguments, why it cannot run here or None)
ENGINES: dict[str, tuple[list[str], str | None]] = {
    "sqlite": (["--engine", "sqlite", "--encryption", "none,sqlcipher:aes-256-cbc"], None),
    # and gocryptfs' password, where it runs; a small redo log and buffer pool: the gocryptfs twin's live view is
    # read whole through the mount, and secrets go where they go whatever the sizes
    "mariadb": (["--engine", "mariadb", "--encryption",
                 "tde:aes-256-ctr,fs:gocryptfs" if _have_gocryptfs() else "tde:aes-256-ctr",
                 "--server-setting", "innodb_log_file_size=48M", "--server-setting", "innodb_buffer_pool_size=128M"],
                None if _have_mariadb() else "mariadbd is not installed (apt-get install mariadb-server)"),
    "postgres": (["--engine", "postgres", "--encryption", "column:aes-256,fs:gocryptfs", "--tcp"],
                 None if _have_postgres() and _have_gocryptfs() else
                 "postgres or gocryptfs is not installed (apt-get install postgresql postgresql-contrib gocryptfs)"),
}


@dataclass
class Observed:
    """What a watcher saw during one run."""

    code: int = -1
    stdout: str = ""
    stderr: str = ""
    cmdlines: dict[int, str] = field(default_factory=dict)
    environs: dict[int, str] = field(default_factory=dict)
    names: dict[int, str] = field(default_factory=dict)
    listening: dict[int, list[tuple[str, str, int]]] = field(default_factory=dict)  # pid -> (proto, ip, port)
    unix: dict[int, set[str]] = field(default_factory=dict)
    unix_modes: dict[str, tuple[int, int]] = field(default_factory=dict)  # socket -> (mode, directory mode)
    secret_files: dict[str, tuple[int, int]] = field(default_factory=dict)  # path -> (mode, parent mode)
    run_dir: Path = Path()
    work_dir: Path = Path()
    secrets: frozenset[str] = frozenset()  # every secret this process issued
    run_secrets: frozenset[str] = frozenset()  # those the run issued (what its files could hold)


def _hex_ip(text: str) -> str:
    """/proc/net/tcp address (little-endian hex) -> dotted or IPv6 text."""
    raw = bytes.fromhex(text)
    if len(raw) == 4:
        return ".".join(str(b) for b in raw[::-1])
    words = [raw[i:i + 4][::-1] for i in range(0, 16, 4)]
    joined = b"".join(words)
    if joined[:12] == b"\0" * 10 + b"\xff\xff":
        return ".".join(str(b) for b in joined[12:])
    return ":".join(joined[i:i + 2].hex() for i in range(0, 16, 2))


def _net_table(pid: int, name: str, tables: dict[tuple[str, str], list[str]] | None) -> list[str]:
    """Lines of ``/proc/<pid>/net/<name>`` without the header (OSError if unreadable). The table is that of the
    process's network namespace: with ``tables`` (one dict per poll) it is read once per namespace, not per pid."""
    key = None
    if tables is not None:
        try:
            key = (os.readlink(f"/proc/{pid}/ns/net"), name)
        except OSError:
            key = None
        if key in tables:
            return tables[key]
    lines = Path(f"/proc/{pid}/net/{name}").read_text().splitlines()[1:]
    if key is not None:
        tables[key] = lines
    return lines


def listening_sockets(pid: int, tables: dict[tuple[str, str], list[str]] | None = None,
                      ) -> tuple[list[tuple[str, str, int]], set[str]]:
    """(TCP listeners and bound UDP sockets as (proto, ip, port), Unix socket paths) of ``pid``, from /proc.
    ``tables``: a cache of the /proc/net tables shared by the calls of one poll (see :func:`_net_table`)."""
    inodes = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    except OSError:
        return [], set()
    if not inodes:  # no socket open: nothing in the tables can be this process's
        return [], set()
    inet: list[tuple[str, str, int]] = []
    for proto in ("tcp", "tcp6", "udp", "udp6"):
        try:
            lines = _net_table(pid, proto, tables)
        except OSError:
            continue
        for line in lines:
            parts = line.split()
            local, state, inode = parts[1], parts[3], parts[9]
            if inode not in inodes or (proto.startswith("tcp") and state != "0A"):
                continue
            address, port = local.split(":")
            inet.append((proto, _hex_ip(address), int(port, 16)))
    paths = set()
    try:
        for line in _net_table(pid, "unix", tables):
            parts = line.split()
            if len(parts) >= 8 and parts[6] in inodes:
                paths.add(parts[7])
    except OSError:
        pass
    return inet, paths


class Watcher(threading.Thread):
    """Polls the descendants of this process and the key-file locations while a run goes."""

    def __init__(self, seen: Observed, secret_globs: list[str]) -> None:
        super().__init__(daemon=True)
        self.seen = seen
        self.globs = secret_globs
        self.stop = threading.Event()
        self.polls = 0

    def run(self) -> None:
        while not self.stop.is_set():
            self.poll()
            time.sleep(0.02)

    def poll(self) -> None:
        """Every 20 ms: the command line and environment of each new process and the key files (a helper's
        command line or a transient key file may live for milliseconds); every 100 ms: the sockets each process
        listens on (a server's live for seconds)."""
        self.polls += 1
        sockets = self.polls % 5 == 1
        tables: dict[tuple[str, str], list[str]] = {}  # /proc/net tables, read once per poll
        for pid in descendants([os.getpid()])[1:]:  # below this process
            if pid not in self.seen.environs:  # recorded once per pid (the first sighting is kept)
                try:
                    child = psutil.Process(pid)
                    self.seen.cmdlines.setdefault(pid, "\0".join(child.cmdline()))
                    self.seen.names.setdefault(pid, child.name())
                    env = child.environ()
                    self.seen.environs.setdefault(pid, "\0".join(f"{k}={v}" for k, v in env.items()))
                except psutil.Error:
                    continue
            if sockets:
                self._sockets(pid, tables)
        self._key_files()

    def _sockets(self, pid: int, tables: dict[tuple[str, str], list[str]]) -> None:
        inet, unix = listening_sockets(pid, tables)
        if inet:
            self.seen.listening[pid] = sorted(set(self.seen.listening.get(pid, [])) | set(inet))
        if unix:
            self.seen.unix.setdefault(pid, set()).update(unix)
            for path in unix - set(self.seen.unix_modes):
                try:
                    modes = (stat.S_IMODE(os.stat(path).st_mode), stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode))
                except OSError:
                    continue
                self.seen.unix_modes[path] = modes

    def _key_files(self) -> None:
        for pattern in self.globs:
            for path in _glob(pattern):
                try:
                    mode = stat.S_IMODE(os.lstat(path).st_mode)
                    parent = stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode)
                except OSError:
                    continue
                if os.path.isfile(path) and not os.path.islink(path):
                    self.seen.secret_files.setdefault(path, (mode, parent))


def _glob(pattern: str) -> list[str]:
    import glob

    return glob.glob(pattern)


def _run_observed(name: str, extra: list[str], base: Path, data_dir: Path) -> Observed:
    """One run of ``name`` through the CLI with a watcher; instance directories kept for the scan."""
    seen = Observed(run_dir=base / f"run-{name}", work_dir=base / f"work-{name}")
    seen.work_dir.mkdir(mode=0o755)
    seen.work_dir.chmod(0o755)
    private_tmp = Path(tempfile.gettempdir())
    # secret directories only: a parallel test's cipher-floor pages (/dev/shm/tdebench-pages-*) hold no key
    globs = [f"{seen.work_dir}/tdebench-*/*/keys/*", f"{seen.work_dir}/tdebench-*/*/keys/*/*",
             "/dev/shm/tdebench-secret-*/*", f"{private_tmp}/tdebench-secret-*/*", "/tmp/tdebench-secret-*/*"]
    watcher = Watcher(seen, globs)
    import io
    import sys
    from contextlib import redirect_stderr, redirect_stdout

    out, err = io.StringIO(), io.StringIO()
    before = issued_secrets()
    watcher.start()
    try:
        with redirect_stdout(out), redirect_stderr(err):
            try:
                # two queries (a scan of lineitem, a join with a sort): the secrets go where they go whatever the
                # queries; every engine's 22 answers are the conformance kit's (tests/engines/kit.py)
                main(["run", *extra, "--workload-option", "queries=1,18", "--trials", "1", "--warmup", "0",
                      "--no-report", "--keep", "--out",
                      str(seen.run_dir), "--data-dir", str(data_dir), "--work-dir", str(seen.work_dir)])
            except SystemExit as exc:
                seen.code = int(exc.code or 0)
    finally:
        watcher.stop.set()
        watcher.join()
    seen.stdout, seen.stderr = out.getvalue(), err.getvalue()
    print(seen.stderr, file=sys.__stderr__)
    seen.secrets = issued_secrets()
    seen.run_secrets = seen.secrets - before
    return seen


@functools.lru_cache(maxsize=None)
def observed_run(name: str, data_dir: Path) -> Observed:
    """Run ``name`` once per session (shared with test_exposure.py); skip when it cannot run here.
    ``data_dir``: the TPC-H SF 0.01 directory of the session (fixture ``tpch_sf001``)."""
    extra, missing = ENGINES[name]
    if missing:
        pytest.skip(missing)
    base = Path(tempfile.mkdtemp(prefix=f"t10-security-{name}-"))
    base.chmod(0o755)
    state = base / "state"
    previous = os.environ.get("XDG_STATE_HOME")
    os.environ["XDG_STATE_HOME"] = str(state)
    seen: Observed | None = None
    try:
        seen = _run_observed(name, extra, base, data_dir)
        return seen
    finally:
        if previous is None:
            os.environ.pop("XDG_STATE_HOME", None)
        else:
            os.environ["XDG_STATE_HOME"] = previous
        _remove_kept(base, seen.run_secrets if seen is not None else frozenset())


def _remove_kept(base: Path, secrets: frozenset[str]) -> None:
    """The run kept its instances (--keep) for the scan: scan now for the secrets it issued, then delete them."""
    _SCANS[str(base)] = _scan_tree(base, secrets)
    shutil.rmtree(base, ignore_errors=True)


_SCANS: dict[str, tuple[list[str], list[str]]] = {}


def _scan_tree(base: Path, secrets: frozenset[str]) -> tuple[list[str], list[str]]:
    """(every regular file below ``base``: the run directory and the kept instance directories, those holding any
    form of ``secrets``). Each file is read once, its written extents only: a preallocated redo log's unwritten
    hundreds of MiB read as zeros, which hold no secret."""
    files = [str(p) for p in files_on_disk([base])]
    needles = [form for secret in secrets for form in _forms(secret)]
    return files, files_holding([base], needles) if needles else []


def _forms(secret: str) -> list[bytes]:
    """A secret as it could appear: text, upper-case hex, raw bytes of a hex key."""
    forms = [secret.encode()]
    if len(secret) >= 32 and all(c in "0123456789abcdefABCDEF" for c in secret):
        forms.append(bytes.fromhex(secret))
    return forms


def _key_file(path: str) -> bool:
    """Files that hold key material by design (mode-checked instead of grep'ed)."""
    parts = Path(path).parts
    return "keys" in parts or any(p.startswith(("tdebench-secret-", "tdebench-mariadb-")) for p in parts)


@pytest.fixture(params=[pytest.param(n, marks=[pytest.mark.server] if n != "sqlite" else [])
                        for n in sorted(ENGINES)])
def observed(request, tpch_sf001) -> Observed:
    return observed_run(request.param, Path(tpch_sf001[0]).parent)


def test_run_succeeds_and_generates_secrets(observed):
    assert observed.code == 0, observed.stderr[-3000:]
    assert observed.secrets, "an encrypted config should have generated a key or password"


def test_no_secret_in_run_directory_or_kept_instances(observed):
    """No secret the run issued is in a file of its run directory or of its kept instances (key files aside)."""
    files, holding = next(v for k, v in _SCANS.items() if Path(observed.run_dir).parent == Path(k))
    assert any("manifest.json" in p for p in files) and any("/work-" in p for p in files)
    assert observed.run_secrets
    leaks = [path for path in holding if not _key_file(path)]
    assert not leaks, f"secrets found in {sorted(set(leaks))[:10]}"


def test_no_secret_in_output_or_messages(observed):
    for secret in observed.secrets:
        assert secret not in observed.stdout and secret not in observed.stderr


def test_no_secret_on_any_command_line_or_environment(observed):
    assert observed.cmdlines or "sqlite" in observed.run_dir.name
    for pid, cmdline in observed.cmdlines.items():
        for secret in observed.secrets:
            assert secret not in cmdline, f"secret on the command line of {observed.names.get(pid)}"
            assert secret not in observed.environs.get(pid, ""), f"secret in the environment of {observed.names[pid]}"


def test_key_files_are_0600_in_0700_directories(observed):
    if "mariadb" in observed.run_dir.name:
        assert any("keys.enc" in p for p in observed.secret_files), "the watcher never saw MariaDB's key file"
    for path, (mode, parent) in observed.secret_files.items():
        assert mode & 0o077 == 0, f"{path} has mode {mode:o}"
        assert parent & 0o077 == 0, f"{os.path.dirname(path)} has mode {parent:o}"


def test_errors_are_redacted_in_messages_and_manifest(tmp_path, capfd, monkeypatch, tpch_sf001):
    """An error whose text carries the key (a DBMS echoing a statement) reaches the user as ***, also with --debug."""
    import json

    from tdebench.engines.sqlite import engine as sqlite
    from tdebench.errors import EnvironmentProblem

    def leaky_start(self):
        if self._key is not None:
            raise EnvironmentProblem(f"cannot open with PRAGMA key = \"x'{self._key.hex()}'\"", "check the key")
        self._dir.mkdir(parents=True, exist_ok=True, mode=0o700)

    monkeypatch.setattr(sqlite.SqliteInstance, "start", leaky_start)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    for debug in ([], ["--debug"]):
        out = tmp_path / f"run{len(debug)}"
        capfd.readouterr()
        with pytest.raises(SystemExit) as info:
            main(["run", "--out", str(out), "--data-dir", str(Path(tpch_sf001[0]).parent), "--trials", "1",
                  "--encryption", "sqlcipher:aes-256-cbc", "--no-report", *debug])
        _, err = capfd.readouterr()
        assert info.value.code == 3
        assert "PRAGMA key" in err and "x'***'" in err
        status = json.loads((out / "manifest.json").read_text())["status"]
        assert "x'***'" in status
        for secret in issued_secrets():
            assert secret not in err and secret not in status


def _servers(seen) -> list[int]:
    return [pid for pid, name in seen.names.items() if name.startswith(SERVER_NAMES)]


@pytest.mark.server
@pytest.mark.parametrize("name, tcp", [("mariadb", False), ("postgres", True)])
def test_servers_of_a_run_listen_only_locally(name, tcp, tpch_sf001):
    """Every server process of a run listens on a Unix socket, or with --tcp on 127.0.0.1 only (test_exposure.py
    covers the other combinations); the run is the one the secret checks above watch."""
    seen = observed_run(name, Path(tpch_sf001[0]).parent)
    assert seen.code == 0, seen.stderr[-2000:]
    servers = _servers(seen)
    assert servers, f"no server process seen during the {name} run"
    database = [p for p in servers if not seen.names[p].startswith("gocryptfs")]
    for pid in servers:
        for proto, ip, port in seen.listening.get(pid, []):
            assert ip in LOOPBACK, f"{seen.names[pid]} (pid {pid}) listens on {proto} {ip}:{port}"
            assert tcp or not proto.startswith("tcp"), f"{seen.names[pid]} listens on {ip}:{port} without --tcp"
    if tcp:
        assert any(seen.listening.get(p) for p in database), "--tcp given but no server listened on 127.0.0.1"
    # Sampling a whole run under load can miss the moment the socket exists; that every instance listens on a
    # Unix socket is asserted deterministically in test_instances_listen_only_locally below.
    sockets = {path for p in database for path in seen.unix.get(p, set()) if path.startswith("/")}
    if not sockets:
        return
    assert sockets and sockets <= set(seen.unix_modes), "socket permissions were not seen"
    for path in sockets:  # other local users cannot reach the server through its socket either
        _, directory = seen.unix_modes[path]
        assert directory & 0o077 == 0, f"{path} lives in a directory with mode {directory:o}"

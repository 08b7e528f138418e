"""Server process lifecycle shared by server engines: find binaries, start, wait, stop, log tail; helpers that
start processes of their own, run and ended as one process group.

Every process started here is tracked; :func:`stop_all` (called by the CLI on exit, error,
Ctrl-C and SIGTERM) stops whatever is still running. A pid file next to each server, and the
run's ownership record (:mod:`tdebench.runner.ownership`, told through :func:`watch`), let
``tdebench cleanup`` find servers of a run that was killed.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import pwd
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import psutil

from tdebench.encryption import redact
from tdebench.proctree import descendants
from tdebench.errors import EnvironmentProblem
from tdebench.lifeline import helper_preexec

SERVICE_USER = "tdebench"
_LIVE: dict[int, "ServerProcess"] = {}
# callbacks told ("started" | "stopped", server): the ownership record of the current run
_WATCHERS: list[Callable[[str, "ServerProcess"], None]] = []
_INTERRUPTED = threading.Event()
_DISPOSABLE = [False]  # the current run deletes its data at the end (no --keep): servers may be killed
#: seconds an interrupted helper's process group is given to exit once killed (its members are already dying)
GROUP_EXIT_S = 5.0


def watch(callback: Callable[[str, "ServerProcess"], None]) -> Callable[[], None]:
    """Call ``callback("started" | "stopped", server)`` when a server starts or stops,
    ``callback("path", directory)`` for :func:`own_path` and ``callback("processes", pids)`` for
    :func:`own_processes`; returns the function that unsubscribes."""
    _WATCHERS.append(callback)
    return lambda: _WATCHERS.remove(callback) if callback in _WATCHERS else None


def _notify(event: str, subject: "ServerProcess | Path") -> None:
    for callback in list(_WATCHERS):
        try:
            callback(event, subject)  # type: ignore[arg-type]
        except Exception:  # noqa: BLE001 - bookkeeping must never stop a server from starting or stopping
            pass


def own_path(path: Path) -> Path:
    """Tell the current run's ownership record about a ``tdebench-*`` directory made outside the work
    directory (a short socket directory, a relocated instance, a pass-file directory), so that
    ``tdebench cleanup`` removes it if the run is killed; returns ``path``. A no-op outside a run."""
    _notify("path", path)
    return path


def own_processes(pids: Iterable[int]) -> None:
    """Tell the current run's ownership record about client or helper processes it started (virtual users, a
    pool's workers, sysbench), so that ``tdebench cleanup`` ends those still there if the run is killed. A no-op
    outside a run."""
    found = [int(pid) for pid in pids if pid]
    if found:
        _notify("processes", found)  # type: ignore[arg-type]


def own_children() -> None:
    """:func:`own_processes` for every child this process forked with :mod:`multiprocessing` (VUs, pools)."""
    import multiprocessing

    own_processes(p.pid for p in multiprocessing.active_children() if p.pid is not None)


def run_group(argv: list[str], log: Path | None, user: pwd.struct_passwd | None, timeout: float | None,
              env: dict[str, str] | None = None, stdin: bytes | None = None, cwd: str | Path = "/",
              check: bool = True) -> subprocess.CompletedProcess[bytes]:
    """Run a helper that may start processes of its own (mariadb-install-db, initdb: a bootstrap server) as ``user``
    in its own process group, with ``env`` (None: ours) and ``stdin`` written to a pipe it reads; its output is
    appended to ``log``, or captured without one. The whole group is killed on timeout, error or Ctrl-C and waited
    for until it has exited, so no bootstrap server is left behind or still writing as its data directory is
    deleted. CalledProcessError on a non-zero exit if ``check``."""
    kwargs: dict[str, Any] = {}
    if user is not None:
        kwargs.update(user=user.pw_uid, group=user.pw_gid, extra_groups=[])
    with open(log, "ab") if log is not None else contextlib.nullcontext() as out:
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE if out is None else out,
                                stderr=subprocess.PIPE if out is None else subprocess.STDOUT,
                                stdin=subprocess.DEVNULL if stdin is None else subprocess.PIPE,
                                start_new_session=True, cwd=cwd, env=env, preexec_fn=helper_preexec(), **kwargs)
    with proc:  # closes the pipes however it ends
        try:
            # in the try: an interrupt while the record is written ends the group too (left running, the helper and
            # its bootstrap server kept a mount busy and wrote into the data directory as the run deleted it)
            own_processes([proc.pid])  # with our environment its bootstrap server carries the run's mark too
            output, errors = proc.communicate(stdin, timeout=timeout)
        except BaseException:
            end_group(proc)
            raise
    if check and proc.returncode != 0:
        raise subprocess.CalledProcessError(proc.returncode, argv[0], output, errors)
    return subprocess.CompletedProcess(argv, proc.returncode, output, errors)


def end_group(proc: subprocess.Popen[bytes], timeout: float = GROUP_EXIT_S) -> None:
    """SIGKILL the process group ``proc`` leads and wait until all of it has exited (at most ``timeout`` s after
    ``proc``): the server a helper started is still writing into the data directory until it is gone."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    deadline = time.monotonic() + timeout
    while group_members(proc.pid) and time.monotonic() < deadline:
        time.sleep(0.02)


def group_members(pgid: int) -> list[int]:
    """PIDs of the processes of group ``pgid`` that have not exited. Zombies are left out: they hold no file, and
    the orphans among them wait for init to reap them, which can take a second or two."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                fields = fh.read().rpartition(b")")[2].split()  # the command name may hold spaces and ')'
        except OSError:
            continue
        if len(fields) > 2 and fields[2] == str(pgid).encode() and fields[0] != b"Z":
            found.append(int(name))
    return found


def find_binary(names: Sequence[str], search_dirs: Sequence[Path], package: str) -> Path:
    """The first of ``names`` found in ``search_dirs`` or on PATH; else an error naming the package."""
    tried: list[str] = []
    for name in names:
        for directory in search_dirs:
            candidate = directory / name
            tried.append(str(candidate))
            if candidate.is_file() and os.access(candidate, os.X_OK):
                return candidate
        found = shutil.which(name)
        tried.append(f"{name} on PATH")
        if found:
            return Path(found)
    raise EnvironmentProblem(
        f"cannot find {' or '.join(names)}", f"install the Debian package {package} (apt-get install {package})", tried
    )


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def service_user() -> pwd.struct_passwd | None:
    """When running as root, the unprivileged OS user servers run as (created if missing); else None."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(SERVICE_USER)
    except KeyError:
        pass
    useradd = shutil.which("useradd")
    if not useradd:
        raise EnvironmentProblem("running as root but cannot create an unprivileged user", "install passwd (useradd) or run as a normal user")
    subprocess.run(
        [useradd, "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", SERVICE_USER],
        check=False, capture_output=True,
    )
    try:
        return pwd.getpwnam(SERVICE_USER)
    except KeyError as exc:
        raise EnvironmentProblem(f"could not create the OS user '{SERVICE_USER}'", "create it by hand: useradd --system tdebench") from exc


def chown_tree(path: Path, user: pwd.struct_passwd | None) -> None:
    """Give ``path`` and everything below it to ``user`` (no-op when user is None)."""
    if user is None:
        return
    for root, dirs, files in os.walk(path):
        os.chown(root, user.pw_uid, user.pw_gid)
        for name in dirs + files:
            os.lchown(os.path.join(root, name), user.pw_uid, user.pw_gid)


def tail(path: Path, lines: int = 15) -> str:
    """The last ``lines`` lines of a log file (redacted), or a note that it is missing."""
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return f"(no log at {path})"
    return redact("\n".join(text.rstrip().splitlines()[-lines:]))


_PR_SET_THP_DISABLE = 41
_LIBC = ctypes.CDLL(None, use_errno=True)  # loaded here: the child between fork and exec only calls it


def _huge_pages_off() -> None:
    """In the child before exec: transparent huge pages off for it and what it execs (the flag is kept)."""
    _LIBC.prctl(_PR_SET_THP_DISABLE, 1, 0, 0, 0)


class ServerProcess:
    """One server process we started, with its log and pid file."""

    def __init__(self, name: str, argv: list[str], log_path: Path, pid_file: Path,
                 user: pwd.struct_passwd | None = None, env: dict[str, str] | None = None,
                 huge_pages: bool = True) -> None:
        self.name = name
        self.argv = argv
        #: False: transparent huge pages off for the process, so its anonymous memory is charged 4 KiB at a time
        #: (a Go runtime asks for 2 MiB pages, which in a small memory cgroup keep freed memory resident)
        self.huge_pages = huge_pages
        self.log_path = log_path
        self.pid_file = pid_file
        self.user = user
        self.env = env
        self.proc: subprocess.Popen[bytes] | None = None
        self._owner_pid = os.getpid()  # only this process can wait() for the server

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def running(self) -> bool:
        if self.proc is None:
            return False
        if os.getpid() != self._owner_pid:
            # a forked child (a TPC-C virtual user) cannot wait() for the server: poll() would get ECHILD
            # and report it dead, so ask the kernel instead
            try:
                return psutil.Process(self.proc.pid).status() != psutil.STATUS_ZOMBIE
            except psutil.NoSuchProcess:
                return False
        return self.proc.poll() is None

    def start(self, ready: Callable[[], bool], timeout: float = 60.0) -> None:
        """Start the server and wait until ``ready()`` is true; on failure show the log tail."""
        log = open(self.log_path, "ab")
        kwargs: dict = {}
        if self.user is not None:
            kwargs.update(user=self.user.pw_uid, group=self.user.pw_gid, extra_groups=[])
        if not self.huge_pages:
            kwargs["preexec_fn"] = _huge_pages_off
        try:
            self.proc = subprocess.Popen(
                self.argv, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                env=self.env, start_new_session=True, **kwargs,
            )
        finally:
            log.close()
        _LIVE[self.proc.pid] = self
        _notify("started", self)
        self.pid_file.write_text(f"{self.proc.pid}\n")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self._forget()
                raise EnvironmentProblem(
                    f"{self.name} exited during start-up (code {self.proc.returncode}); last lines of its log:\n"
                    f"{tail(self.log_path)}",
                    "check the server settings you passed (--server-setting) and the log above",
                )
            try:
                if ready():
                    return
            except Exception:  # noqa: BLE001 - not ready yet, whatever the client says
                pass
            time.sleep(0.1)
        self.kill()
        raise EnvironmentProblem(
            f"{self.name} did not become ready within {timeout:.0f} s; last lines of its log:\n{tail(self.log_path)}",
            "look at the log above; a slow disk may need a longer start-up timeout",
        )

    def stop(self, graceful: Callable[[], None] | None = None, timeout: float = 30.0) -> None:
        """Clean shutdown via ``graceful()`` (or SIGTERM), then SIGTERM, then SIGKILL."""
        if not self.running():
            self._forget()
            return
        assert self.proc is not None
        try:
            if graceful is not None:
                graceful()
            else:
                self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=timeout)
        except Exception:  # noqa: BLE001 - escalate below
            self.terminate_tree()
        self._forget()

    def terminate_tree(self, grace: float = 10.0) -> None:
        """SIGTERM the process and its children, SIGKILL whatever is left after ``grace`` seconds."""
        if self.proc is None:
            return
        try:
            parent = psutil.Process(self.proc.pid)
            procs = [parent, *parent.children(recursive=True)]
        except psutil.NoSuchProcess:
            procs = []
        terminate_processes(procs, grace, kill_wait=5.0)
        try:
            self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            pass

    def kill(self) -> None:
        """SIGKILL the whole tree at once (start-up failures, tests)."""
        self.terminate_tree(grace=0.0)
        self._forget()

    def tree_pids(self) -> list[int]:
        """PIDs of the server and its children."""
        if not self.running():
            return []
        assert self.proc is not None
        return descendants([self.proc.pid])  # the server first, then the tree below it (none once it is gone)

    def _forget(self) -> None:
        if self.proc is not None:
            _LIVE.pop(self.proc.pid, None)
            _notify("stopped", self)
        self.pid_file.unlink(missing_ok=True)


def live_processes() -> list[ServerProcess]:
    """Servers started by this process that have not been stopped."""
    return list(_LIVE.values())


def set_disposable(disposable: bool) -> None:
    """Whether the running servers' data is deleted anyway, so an interrupt may kill them outright."""
    _DISPOSABLE[0] = disposable


def interrupt() -> None:
    """Called from the CLI's signal handler on the first SIGINT/SIGTERM/SIGHUP: remember it (an error that
    follows is a consequence of the interrupt) and kill disposable servers at once, so that no driver call
    in flight waits on them (e.g. PyMySQL finishing an interrupted LOAD DATA for net_read_timeout)."""
    _INTERRUPTED.set()
    if _DISPOSABLE[0]:
        kill_servers()


def interrupted() -> bool:
    """True once :func:`interrupt` was called (since the last :func:`clear_interrupt`)."""
    return _INTERRUPTED.is_set()


def clear_interrupt() -> None:
    """A new command starts (embedded use runs several in one process)."""
    _INTERRUPTED.clear()


def kill_servers() -> int:
    """SIGKILL every live server except FUSE daemons (their mounts are unmounted cleanly afterwards);
    for an interrupted run whose data directories are deleted anyway. Returns how many were killed."""
    try:
        mounted = {line.split()[1] for line in Path("/proc/mounts").read_text().splitlines()}
    except OSError:
        mounted = set()
    killed = 0
    for server in list(_LIVE.values()):
        if any(os.path.abspath(arg) in mounted for arg in server.argv if arg.startswith("/")):
            continue
        server.kill()
        killed += 1
    return killed


def stop_all(reap: bool = False) -> None:
    """Stop every server still running (last-resort cleanup on exit, error and signals).

    ``reap``: also end every other process descended from this one (drivers, clients, helpers);
    only the console script asks for it, never code embedding tdebench.
    """
    for server in reversed(list(_LIVE.values())):  # newest first: a server stops before the FUSE mount under it
        server.terminate_tree(grace=5.0)
        server._forget()
    if reap:
        terminate_descendants(grace=5.0)


def terminate_descendants(grace: float = 5.0) -> list[int]:
    """SIGTERM every descendant of this process, SIGKILL what is left after ``grace`` s; returns their PIDs."""
    try:
        procs = psutil.Process().children(recursive=True)
    except psutil.Error:
        return []
    terminate_processes(procs, grace, kill_wait=2.0)
    return [p.pid for p in procs]


def terminate_processes(procs: list[psutil.Process], grace: float, kill_wait: float) -> None:
    """SIGTERM ``procs``, SIGKILL those still alive after ``grace`` s, then wait up to ``kill_wait`` s for them."""
    for proc in procs:
        try:
            proc.terminate()
        except psutil.Error:
            pass
    _, alive = psutil.wait_procs(procs, timeout=grace)
    for proc in alive:
        try:
            proc.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(alive, timeout=kill_wait)

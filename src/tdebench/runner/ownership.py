"""What a run owns -- server processes, client and helper processes, directories, mounts, cgroups -- recorded on
disk while it runs.

One JSON file per live run in ``$XDG_STATE_HOME/tdebench/owned/`` (default ``~/.local/state``),
rewritten atomically whenever a server starts or stops or a directory is provisioned, and removed
when the run ends with nothing left behind. A run killed with SIGKILL (or a machine that lost
power) leaves its file; ``tdebench cleanup`` (:mod:`tdebench.runner.cleanup`) then stops its
servers, unmounts its filesystems and deletes its directories, and ``tdebench run`` warns about it.

The record holds paths and PIDs only, never keys or passwords (every text is redacted too).
A server is identified by PID *and* start time, so a recycled PID is never killed. Clients and helpers
(virtual users, pools' workers, sysbench) are recorded the same way when they start; every program the run
starts also inherits the record's ``mark`` in its environment (``TDEBENCH_RUN_MARK``), by which cleanup finds
one the record does not name (a helper's own child). Those processes leave by themselves when tdebench is gone
(:mod:`tdebench.lifeline`); cleanup ends any that did not.
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
from pathlib import Path
from typing import Any

import psutil

from tdebench.encryption import redact
from tdebench.engines.toolkit import process
from tdebench.runner.cleanup import leftovers
from tdebench.runner.owned import (MARK, owned_dirs_in_argv, protect, removable, same_process, socket_dirs,
                                   started_at, state_dir)

RECORD_VERSION = 1


def _name(pid: int) -> str:
    """A process's command, short (for the record and cleanup's messages)."""
    try:
        return " ".join(psutil.Process(pid).cmdline()[:3])[:120]
    except psutil.Error:
        return "?"


class Ownership:
    """The record of the current run. Bookkeeping never fails a run: a problem is reported once."""

    def __init__(self, run_id: str, run_dir: Path, keep: bool, directory: Path | None = None,
                 on_problem: Any = None) -> None:
        self.directory = directory or state_dir()
        protect(run_dir)
        self.path = self.directory / f"{os.getpid()}-{run_id}.json"
        self.on_problem = on_problem
        self.broken = False
        self.data: dict[str, Any] = {
            "version": RECORD_VERSION, "run_id": run_id, "run_dir": str(run_dir.absolute()), "keep": keep,
            "owner": {"pid": os.getpid(), "started": started_at(os.getpid()),
                      "argv": [redact(a) for a in psutil.Process().cmdline()]},
            "dirs": [], "servers": [], "cgroups": [], "processes": [], "mark": self.path.stem,
        }
        self._lock = threading.RLock()  # a signal handler may stop a server while the main thread writes
        self._unwatch = process.watch(self._on_server)
        # every program started from here on inherits the mark in its environment (cleanup finds them by it)
        self._outer_mark = os.environ.get(MARK)
        os.environ[MARK] = self.data["mark"]
        self._write()
        self._stop = threading.Event()
        self._poller = threading.Thread(target=self._poll_children, name="tdebench-ownership", daemon=True)
        self._poller.start()

    # recording --------------------------------------------------------------------------------
    def add_dir(self, path: Path) -> None:
        """A directory this run created (deleted by cleanup unless the run used --keep)."""
        text = str(Path(os.path.abspath(path)))
        with self._lock:
            if text not in self.data["dirs"] and removable(Path(text)):
                self.data["dirs"].append(text)
                self._write()

    def add_cgroup(self, path: Path) -> None:
        """A cgroup this run made (``--schedule duet``; removed by cleanup once its processes are gone)."""
        text = str(Path(os.path.abspath(path)))
        with self._lock:
            if text not in self.data["cgroups"]:
                self.data["cgroups"].append(text)
                self._write()

    def stop_polling(self) -> None:
        """Provisioning is over: no more helpers to watch, and measured trials get no extra /proc reads."""
        self._stop.set()

    def _poll_children(self, interval: float = 0.25) -> None:
        """While instances are provisioned: record ``tdebench-*`` temp directories of helpers that are not
        servers (pass files of initdb, mariadb-install-db, gocryptfs -init on their command lines) and the
        servers' socket directories."""
        seen: set[int] = set()
        while not self._stop.wait(interval):
            try:
                children = psutil.Process().children(recursive=True)
            except psutil.Error:
                continue
            with self._lock:
                servers = [int(s["pid"]) for s in self.data["servers"]]
            for directory in socket_dirs(servers):  # short socket paths live outside the work dir
                self.add_dir(directory)
            for child in children:
                if child.pid in seen:
                    continue
                seen.add(child.pid)
                try:
                    argv = child.cmdline()
                except psutil.Error:
                    continue
                for directory in owned_dirs_in_argv(argv):
                    self.add_dir(Path(directory))

    def add_processes(self, pids: list[int]) -> None:
        """Client or helper processes this run started (ended by cleanup if the run is killed); those that
        have ended since the last call are dropped from the record."""
        with self._lock:
            kept = [e for e in self.data["processes"] if same_process(int(e["pid"]), e.get("started"))]
            known = {int(e["pid"]) for e in kept}
            for pid in pids:
                started = started_at(pid)
                if pid not in known and started is not None:
                    kept.append({"pid": pid, "started": started, "name": redact(_name(pid))})
            self.data["processes"] = kept
            self._write()

    def _on_server(self, event: str, server: process.ServerProcess) -> None:
        if event == "path":  # process.own_path(): a directory, not a server
            self.add_dir(Path(server))  # type: ignore[arg-type]
            return
        if event == "processes":  # process.own_processes(): clients and helpers
            self.add_processes(list(server))  # type: ignore[call-overload]
            return
        pid = server.pid
        if pid is None:
            return
        with self._lock:
            self._record_server(event, server, pid)

    def _record_server(self, event: str, server: process.ServerProcess, pid: int) -> None:
        servers = [s for s in self.data["servers"] if s["pid"] != pid]
        if event == "started":
            servers.append({"pid": pid, "started": started_at(pid), "name": redact(server.name),
                            "pid_file": str(server.pid_file.absolute()),
                            "paths": owned_dirs_in_argv(server.argv)})
            for directory in [server.pid_file.parent, *map(Path, owned_dirs_in_argv(server.argv))]:
                if removable(directory) and str(directory.absolute()) not in self.data["dirs"]:
                    self.data["dirs"].append(str(directory.absolute()))
        self.data["servers"] = servers
        self._write()

    # end of the run -----------------------------------------------------------------------------
    def close(self) -> None:
        """Stop recording; delete the record if nothing it lists is left (else cleanup will find it)."""
        self._unwatch()
        self.stop_polling()
        self._poller.join(timeout=2)
        if self._outer_mark is None:
            os.environ.pop(MARK, None)
        else:
            os.environ[MARK] = self._outer_mark
        if self.broken:
            return
        if leftovers(self.data, check_dirs=not self.data["keep"]).empty:
            self.path.unlink(missing_ok=True)
        else:
            self.data["owner"]["exited"] = True
            self._write()

    def _write(self) -> None:
        if self.broken:
            return
        try:
            self.directory.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd, tmp = tempfile.mkstemp(prefix=".owned-", dir=self.directory)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(redact(json.dumps(self.data, indent=1)))
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, self.path)
        except OSError as exc:
            self.broken = True
            if self.on_problem is not None:
                self.on_problem(f"cannot record what this run owns in {self.directory} ({exc.strerror or exc}); "
                                "if tdebench is killed, `tdebench cleanup` will not find its servers")

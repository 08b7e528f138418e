"""The run's key server: what the orchestrator asks of it (``--keys openbao``, docs/key-management.md).

Before any work, :func:`check_plan` makes sure a key server can serve the plan (``bao`` installed, or the user's
server reachable, accepting the token and holding the keys). During the run, :class:`KeyServers` starts the private
OpenBao (or takes the user's), provisions each keyed config before its instance first starts and hands the instance
its :class:`~tdebench.api.keys.KeyAccess`; at the end it proves that no key's value reached a file of the work
directory or of the run directory, then goes with the run (stopped, its directory deleted).
"""

from __future__ import annotations

import contextlib
import tempfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import Any

import psutil

from tdebench.api.engine import Config, Engine, Instance
from tdebench.api.keys import FILE, KeyPath
from tdebench.api.plan import RunPlan
from tdebench.encryption import SecretKey
from tdebench.engines import get_engine
from tdebench.engines.toolkit.asuser import user_can_reach
from tdebench.engines.toolkit.exposure import files_on_disk, key_forms, search_files
from tdebench.engines.toolkit.process import own_path, service_user
from tdebench.runner.keyserver.bao import PrivateOpenBao, bao_binary
from tdebench.runner.keyserver.client import KvAccess
from tdebench.runner.keyserver.external import ExternalKeyServer

SERVER_DIR = "keyserver"


def server_dir(workdir: Path) -> Path:
    """``<work dir>/keyserver``, or a ``tdebench-keyserver-*`` directory in /var/tmp when the servers' OS user could
    not reach the CA there (a work dir below a 0700 directory, as the instances then move too)."""
    if user_can_reach(workdir, service_user()):
        return workdir / SERVER_DIR
    base = Path("/var/tmp") if Path("/var/tmp").is_dir() else Path(tempfile.gettempdir())
    directory = own_path(Path(tempfile.mkdtemp(prefix="tdebench-keyserver-", dir=base)))  # for tdebench cleanup
    directory.chmod(0o711)
    return directory / SERVER_DIR


def keyed(plan: RunPlan) -> list[Config]:
    """The configs whose keys live on a key server."""
    return [c for c in plan.configs if c.keys != FILE and not c.spec.is_plain]


def key_paths(plan: RunPlan, engines: dict[str, Engine] | None = None) -> dict[str, KeyPath]:
    """Each keyed config's :class:`KeyPath` (label -> path); the plan's checks made sure there is one."""
    out = {}
    for config in keyed(plan):
        engine = (engines or {}).get(config.engine) or get_engine(config.engine)
        path = engine.key_path(config.spec)
        assert path is not None, f"{config.label}: no key path (the plan's checks let it through)"
        out[config.label] = path
    return out


def check_plan(plan: RunPlan) -> None:
    """Before any work: bao installed (exit 3 naming the pip command), the key plugins each engine needs, or the
    user's key server answering with every key the configs need."""
    configs = keyed(plan)
    if not configs:
        return
    for config in configs:
        get_engine(config.engine).check_key_path(config.spec)
    if plan.key_server:
        paths = key_paths(plan)
        ExternalKeyServer(plan.key_server).check([(c.label, paths[c.label].needs) for c in configs])
    else:
        bao_binary()


class KeyServers:
    """The run's key server, when a config keeps its keys on one (every method is a no-op otherwise)."""

    def __init__(self, plan: RunPlan, engines: dict[str, Engine]) -> None:
        self.plan = plan
        self.paths = key_paths(plan, engines)
        self.private: PrivateOpenBao | None = None
        self.external = ExternalKeyServer(plan.key_server) if plan.key_server and self.paths else None
        self.access: dict[str, KvAccess] = {}
        self.provision_s: dict[str, float] = {}
        self._keys: list[SecretKey] = []  # every key value the run knows, for the leak scan (memory only)

    @property
    def active(self) -> bool:
        return bool(self.paths)

    def start(self, stack: ExitStack, workdir: Path, say: Callable[[str], None]) -> dict[str, Any]:
        """Start the private OpenBao in the work directory (or check the user's again); facts for the manifest."""
        if not self.active:
            return {}
        say("starting the run's key server" if self.external is None
            else f"checking the key server at {self.external.url}")
        if self.external is not None:
            self.external.check([(label, path.needs) for label, path in self.paths.items()])
            return self.external.facts()
        self.private = PrivateOpenBao(server_dir(workdir))
        stack.callback(self.private.destroy)  # before the work dir goes, after the instances (registered later)
        self.private.start()
        return self.private.facts()

    def take_keys(self, instance: Instance) -> None:
        """Provision ``instance``'s config on the key server and hand it its access (before its first start)."""
        label = instance.config.label
        path = self.paths.get(label)
        if path is None:
            return
        started = time.monotonic()
        if self.external is not None:
            access = self.external.access(label)
            self._keys += [access.fetch(n.key_id) for n in path.needs if n.required]
        else:
            assert self.private is not None
            access = self.private.provision(label, path.needs)
            self._keys += [access.fetch(n.key_id) for n in path.needs]
        self.provision_s[label] = round(time.monotonic() - started, 3)
        self.access[label] = access
        instance.take_keys(access)

    def facts(self, label: str) -> dict[str, Any]:
        """The manifest's ``key_source`` of a config."""
        access = self.access.get(label)
        if access is None:
            return {}
        return {**access.facts(), "path": self.paths[label].facts(), "provision_s": self.provision_s.get(label)}

    def requests(self) -> dict[str, float]:
        """Requests the private key server handled per config so far ({} for the user's server)."""
        return self.private.reads() if self.private is not None and self.private.running() else {}

    def leak_scan(self, roots: list[Path], say: Callable[[str], None]) -> dict[str, Any]:
        """Every file under ``roots`` searched for every key value of the run (hex, upper-case hex, raw bytes):
        the proof that no key reached a file. Names of files only; never a key. {} without a key server."""
        keys = self._keys + (self.private.written if self.private is not None else [])  # rotations' versions too
        if not keys:
            return {}
        say("searching the work and run directories for the key server's keys")
        distinct = list({key.hex(): key for key in keys}.values())
        needles = [form for key in distinct for form in (*key_forms(key.hex()), key.hex().upper().encode())]
        files = list(files_on_disk(roots))
        found = search_files(roots, {"key": needles})["key"]
        return {"keys": len(distinct), "files_scanned": len(files),
                # allocated bytes: a disk image is sparse
                "bytes_scanned": sum(p.stat().st_blocks * 512 for p in files if p.exists()),
                "roots": [str(r) for r in roots], "files_with_a_key": found, "passed": not found}

    def verify_no_leak(self, roots: list[Path], verification: dict[str, Any], problems: list[str],
                       say: Callable[[str], None]) -> None:
        """:meth:`leak_scan` into ``verification["key_leaks"]``; a key found in clear is a problem of the run."""
        scan = self.leak_scan(roots, say)
        if scan:
            verification["key_leaks"] = scan
            if not scan["passed"]:
                problems.append(f"a key of the key server is in clear in {', '.join(scan['files_with_a_key'][:3])}")

    @contextlib.contextmanager
    def usage(self, instances: Iterable[Instance], manifest: dict[str, Any]) -> Iterator[None]:
        """Over the measured blocks: the key server's requests per config and its CPU time, beside the databases'
        (``manifest["key_server"]["usage"]``). Requests are the private server's own count; a user's server
        counts only tdebench's own fetches. CPU is summed over every process that ran meanwhile (a server
        restarted before every block is a new process each time), read once a second."""
        if not self.active:
            yield
            return
        instances = [i for i in instances if i.scannable]
        requests, fetched = self.requests(), {label: a.fetched for label, a in self.access.items()}
        server = CpuTotal(lambda: self.private.pids() if self.private is not None else [])
        databases = CpuTotal(lambda: [pid for i in instances for pid in _pids(i)])
        began = time.monotonic()
        try:
            with server.sampling(), databases.sampling():
                yield
        finally:
            after = self.requests()
            entry = manifest.setdefault("key_server", {})
            if any(after.get(k, 0) < v for k, v in requests.items()):
                entry["usage"] = {"note": "the key server restarted during the measured blocks (--fault "
                                          "keyserver-down): its request counts began again and are not given"}
            else:
                entry["usage"] = {"requests": {k: after.get(k, 0) - v for k, v in requests.items()}}
            entry["usage"].update({
                "measured_s": round(time.monotonic() - began, 1),
                "tdebench_fetches": {k: self.access[k].fetched - v for k, v in fetched.items()},
                "keyserver_cpu_s": round(server.seconds, 3), "database_cpu_s": round(databases.seconds, 3),
                "database_cpu_note": "every instance's server processes (an embedded engine's: tdebench's own)"})


class CpuTotal:
    """User + system CPU seconds a changing set of processes used while :meth:`sampling` (each process counted
    from when it was first seen, or started, to its last reading)."""

    def __init__(self, pids: Callable[[], list[int]], every: float = 1.0) -> None:
        self.pids, self.every = pids, every
        self._first: dict[tuple[int, float], float] = {}
        self._last: dict[tuple[int, float], float] = {}
        self._started = 0.0

    def _read(self) -> None:
        for pid in set(self.pids()):
            try:
                proc = psutil.Process(pid)
                key, times = (pid, proc.create_time()), proc.cpu_times()
            except psutil.Error:
                continue
            cpu = times.user + times.system
            # a process there at the start counts from then; one started later, from its start
            self._first.setdefault(key, cpu if key[1] < self._started else 0.0)
            self._last[key] = cpu

    @contextlib.contextmanager
    def sampling(self) -> Iterator[None]:
        self._started = time.time()
        self._read()
        stop = threading.Event()
        thread = threading.Thread(target=lambda: [self._read() for _ in iter(lambda: stop.wait(self.every), True)],
                                  name="tdebench-cpu-total", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join(5)
            self._read()

    @property
    def seconds(self) -> float:
        return sum(self._last[k] - self._first.get(k, 0.0) for k in self._last)


def _pids(instance: Instance) -> list[int]:
    try:
        return instance.server_pids()
    except Exception:  # noqa: BLE001 - a server being restarted: counted at the next snapshot
        return []

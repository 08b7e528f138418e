"""Find and remove what dead runs left behind: servers, mounts, directories, cgroups (``tdebench cleanup``).

A run is dead when the tdebench process that wrote its ownership record is gone (SIGKILL, OOM
killer, power loss). Its servers run on in their own sessions; cleanup ends the clients and helpers still
there (those the record names, and those whose environment carries its mark), stops the servers (TERM, then
KILL), lazily unmounts FUSE filesystems and loop-mounted images below its directories, detaches the loop
devices whose image lies there (an fscrypt key lives in the filesystem's keyring and goes with it), deletes
its ``tdebench-*`` directories (and the ``tdebench-*`` directories their symlinks point to) unless the run
used ``--keep``, removes the ``tdebench-*`` cgroups it made (``--schedule duet``), and finally removes transient
secret directories that outlived any start-up.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from tdebench.engines.toolkit.fscrypt import detach, loop_devices
from tdebench.engines.toolkit.process import terminate_processes
from tdebench.runner.cgroups import is_ours, remove_group, thaw
from tdebench.runner.owned import MARK, PREFIX, owner_alive, read_records, removable, same_process, temp_roots

# temp directories that only live while a server starts (gocryptfs/initdb pass files, MariaDB file key)
TRANSIENT_PREFIXES = ("tdebench-secret-",)
TRANSIENT_MAX_AGE = 15 * 60.0


@dataclass
class Leftovers:
    """What of a record is still there."""

    servers: list[dict[str, Any]] = field(default_factory=list)
    mounts: list[str] = field(default_factory=list)
    dirs: list[str] = field(default_factory=list)
    loops: list[str] = field(default_factory=list)
    cgroups: list[str] = field(default_factory=list)
    processes: list[dict[str, Any]] = field(default_factory=list)  # clients and helpers

    @property
    def empty(self) -> bool:
        return not (self.servers or self.mounts or self.dirs or self.loops or self.cgroups or self.processes)

    def describe(self) -> str:
        parts = [f"{len(self.servers)} server process(es)" if self.servers else "",
                 f"{len(self.processes)} other process(es)" if self.processes else "",
                 f"{len(self.mounts)} mount(s)" if self.mounts else "",
                 f"{len(self.loops)} loop device(s)" if self.loops else "",
                 f"{len(self.cgroups)} cgroup(s)" if self.cgroups else "",
                 f"{len(self.dirs)} director{'y' if len(self.dirs) == 1 else 'ies'}" if self.dirs else ""]
        return ", ".join(p for p in parts if p) or "nothing"


def mount_points() -> list[tuple[str, str]]:
    """(mount point, fstype) of every mount, from /proc/mounts."""
    try:
        lines = Path("/proc/mounts").read_text().splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        parts = line.split()
        if len(parts) >= 3:
            out.append((parts[1].replace("\\040", " ").replace("\\011", "\t").replace("\\134", "\\"), parts[2]))
    return out


def _under(path: str, dirs: list[str]) -> bool:
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in dirs)


def _linked_dirs(dirs: list[str]) -> list[str]:
    """``tdebench-*`` directories outside ``dirs`` that symlinks inside them point to."""
    found: list[str] = []
    for directory in dirs:
        for root, subdirs, files in os.walk(directory, followlinks=False):
            for name in subdirs + files:
                path = os.path.join(root, name)
                if not os.path.islink(path):
                    continue
                target = Path(os.path.abspath(os.path.join(root, os.readlink(path))))
                for top in [target, *target.parents]:
                    if top.name.startswith(PREFIX) and top.parent in temp_roots():
                        if not _under(str(top), dirs) and str(top) not in found:
                            found.append(str(top))
                        break
    return found


def leftovers(record: dict[str, Any], check_dirs: bool = True) -> Leftovers:
    """Servers of ``record`` still running, mounts below its directories, its directories still on disk."""
    dirs = [d for d in record.get("dirs", []) if removable(Path(d))]
    servers = [s for s in record.get("servers", []) if same_process(int(s["pid"]), s.get("started"))]
    linked = _linked_dirs([d for d in dirs if os.path.lexists(d)])  # relocated instances hold mounts too
    mounts = [m for m, _ in mount_points() if _under(m, dirs + linked)]
    existing = [d for d in dirs if os.path.lexists(d)] if check_dirs else []
    if check_dirs:
        existing += [d for d in linked if d not in existing]
    outermost = [d for d in existing if not any(o != d and _under(d, [o]) for o in existing)]
    loops = [device for device, _ in loop_devices(dirs + linked)]
    groups = [c for c in record.get("cgroups", []) if os.path.isdir(c) and is_ours(Path(c))]
    return Leftovers(servers, mounts, outermost, loops, cgroups=groups, processes=run_processes(record, servers))


def run_processes(record: dict[str, Any], servers: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Clients and helpers of ``record`` still running: those it names (PID and start time) and those whose
    environment carries its mark (a helper's own child); never one of its ``servers`` or their children (they are
    stopped in their order), nor this process or its parents."""
    spared = {os.getpid(), *(p.pid for p in _parents())}
    for entry in servers:
        spared |= {p.pid for p in _tree(entry)}
    found = {int(e["pid"]): e for e in record.get("processes", [])
             if int(e["pid"]) not in spared and same_process(int(e["pid"]), e.get("started"))}
    mark = record.get("mark")
    for proc in psutil.process_iter() if mark else []:
        if proc.pid in spared or proc.pid in found:
            continue
        try:
            if proc.environ().get(MARK) == mark and proc.status() != psutil.STATUS_ZOMBIE:
                found[proc.pid] = {"pid": proc.pid, "started": proc.create_time(),
                                   "name": " ".join(proc.cmdline()[:3])[:120]}
        except psutil.Error:  # gone, or another user's
            continue
    return list(found.values())


def _parents() -> list[psutil.Process]:
    try:
        return psutil.Process().parents()
    except psutil.Error:
        return []


def end_processes(entries: list[dict[str, Any]], grace: float = 3.0) -> list[dict[str, Any]]:
    """TERM the processes, KILL those left after ``grace`` s; returns the entries that survived."""
    procs = {}
    for entry in entries:
        if same_process(int(entry["pid"]), entry.get("started")):
            try:
                procs[int(entry["pid"])] = psutil.Process(int(entry["pid"]))
            except psutil.Error:
                continue
    terminate_processes(list(procs.values()), grace, kill_wait=5.0)
    left = {p.pid for p in _wait(list(procs.values()), 0.0)}
    return [e for e in entries if int(e["pid"]) in left]


def _tree(entry: dict[str, Any]) -> list[psutil.Process]:
    try:
        parent = psutil.Process(int(entry["pid"]))
        return [parent, *parent.children(recursive=True)]
    except psutil.Error:
        return []


def _is_mount_daemon(entry: dict[str, Any], points: set[str]) -> bool:
    """True for a server whose command line names a mounted directory (gocryptfs and other FUSE daemons)."""
    try:
        argv = psutil.Process(int(entry["pid"])).cmdline()
    except psutil.Error:
        return False
    return any(os.path.abspath(a) in points for a in argv if a.startswith("/"))


def _wait(procs: list[psutil.Process], timeout: float) -> list[psutil.Process]:
    """Wait until ``procs`` are gone (zombies count as gone: their parent reaps them); the ones left."""
    deadline = time.monotonic() + timeout
    while True:
        alive = []
        for proc in procs:
            try:
                if proc.is_running() and proc.status() != psutil.STATUS_ZOMBIE:
                    alive.append(proc)
            except psutil.Error:
                continue
        if not alive or time.monotonic() >= deadline:
            return alive
        time.sleep(0.05)


def stop_servers(entries: list[dict[str, Any]], grace: float,
                 databases_grace: float | None = None) -> list[dict[str, Any]]:
    """TERM the servers (databases first, then the FUSE daemons they live in), KILL what is left after
    ``grace`` s (``databases_grace`` for the databases, when given); returns the entries that survived."""
    points = {m for m, _ in mount_points()}
    daemons = [e for e in entries if _is_mount_daemon(e, points)]
    databases = [e for e in entries if e not in daemons]
    survivors = []
    for phase, wait in ((databases, grace if databases_grace is None else databases_grace), (daemons, grace)):
        procs = {e["pid"]: _tree(e) for e in phase}
        everything = [p for tree in procs.values() for p in tree]
        for tree in procs.values():  # the server itself shuts its children down
            try:
                tree[0].terminate()
            except (psutil.Error, IndexError):
                pass
        alive = _wait(everything, wait)
        for proc in alive:
            try:
                proc.kill()
            except psutil.Error:
                pass
        left = {p.pid for p in _wait(alive, 5.0)}
        survivors += [e for e in phase if any(p.pid in left for p in procs[e["pid"]])]
    return survivors


def _unmount(point: str, fstype: str) -> bool:
    """Lazy unmount (the processes using it are gone); True once it is no longer mounted."""
    tools = ([["fusermount3", "-u", "-z", point], ["fusermount", "-u", "-z", point]] if fstype.startswith("fuse")
             else []) + [["umount", "-l", point]]
    for argv in tools:
        if shutil.which(argv[0]) is None:
            continue
        subprocess.run(argv, capture_output=True, check=False, timeout=30)
        if point not in {m for m, _ in mount_points()}:
            return True
    return False


@dataclass
class CleanupResult:
    """What cleanup did for one dead run, and what it could not do."""

    run_id: str
    run_dir: str
    stopped: int = 0
    ended: int = 0  # clients and helpers
    unmounted: int = 0
    removed: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


def clean_record(path: Path, record: dict[str, Any], grace: float = 10.0) -> CleanupResult:
    """Stop, unmount and delete what a dead run left; the record goes once nothing is left."""
    keep = bool(record.get("keep"))
    result = CleanupResult(str(record.get("run_id", "?")), str(record.get("run_dir", "?")))
    found = leftovers(record)
    for group in found.cgroups:  # a frozen task (--schedule turns) dies only once it runs again
        thaw(Path(group))
    left = end_processes(found.processes)  # clients first: they hold connections to the servers
    result.ended = len(found.processes) - len(left)
    result.failed += [f"process {e['pid']} ({e.get('name')}) survived SIGKILL" for e in left]
    # a run without --keep deletes their data: the databases are killed at once, as an interrupted run does
    survivors = stop_servers(found.servers, grace, None if keep else 0.0)
    result.stopped = len(found.servers) - len(survivors)
    result.failed += [f"process {e['pid']} ({e.get('name')}) survived SIGKILL" for e in survivors]
    types = dict(mount_points())
    for point in sorted(found.mounts, key=len, reverse=True):
        if _unmount(point, types.get(point, "")):
            result.unmounted += 1
        else:
            result.failed.append(f"could not unmount {point} (try: umount -l {point})")
    for device in found.loops:  # images whose mount is gone (or never was); an unmount may have freed them
        if not detach(device):
            result.failed.append(f"could not detach {device} (try: losetup -d {device})")
    for group in found.cgroups:  # its processes are gone with the servers
        if remove_group(Path(group)):
            result.removed.append(group)
        else:
            result.failed.append(f"could not remove cgroup {group} (processes still in it)")
    mounted = [m for m, _ in mount_points()]
    for directory in found.dirs:
        if keep and directory in record.get("dirs", []):
            result.kept.append(directory)
            continue
        if any(_under(m, [directory]) for m in mounted):
            result.failed.append(f"{directory} still has a mount below it")
            continue
        _remove(Path(directory), result)
    if not result.failed:
        path.unlink(missing_ok=True)
    return result


def _remove(path: Path, result: CleanupResult) -> None:
    if not removable(path):
        result.failed.append(f"refused to delete {path} (not a tdebench directory)")
        return
    try:
        if path.is_symlink() or path.is_file():
            path.unlink()
        else:
            shutil.rmtree(path)
        result.removed.append(str(path))
    except FileNotFoundError:
        pass
    except OSError as exc:
        result.failed.append(f"could not delete {path}: {exc.strerror or exc}")


def stale_transient_dirs(max_age: float = TRANSIENT_MAX_AGE) -> list[Path]:
    """Secret directories that exist only while a server starts, older than ``max_age`` seconds."""
    now = time.time()
    stale = []
    for root in temp_roots():
        for path in root.glob(f"{PREFIX}*"):
            try:
                old = now - path.lstat().st_mtime > max_age
            except OSError:
                continue
            if old and path.is_dir() and path.name.startswith(TRANSIENT_PREFIXES):
                stale.append(path)
    return stale


def dead_runs(directory: Path | None = None) -> list[tuple[Path, dict[str, Any], Leftovers]]:
    """Records of runs whose tdebench process is gone, with what they left; empty records are deleted."""
    out = []
    for path, record in read_records(directory):
        if owner_alive(record):
            continue
        found = leftovers(record, check_dirs=not record.get("keep"))
        if found.empty:
            path.unlink(missing_ok=True)
            continue
        out.append((path, record, found))
    return out


def live_runs(directory: Path | None = None) -> list[dict[str, Any]]:
    """Records of runs whose tdebench process still runs."""
    return [record for _, record in read_records(directory) if owner_alive(record)]


def leftover_warning(directory: Path | None = None) -> str | None:
    """One line for ``tdebench run`` when dead runs left servers, mounts or directories behind."""
    try:
        dead = dead_runs(directory)
    except OSError:
        return None
    if not dead:
        return None
    what = "; ".join(f"{r.get('run_id', '?')} (pid {r.get('owner', {}).get('pid', '?')}): {found.describe()}"
                     for _, r, found in dead[:3])
    more = f" and {len(dead) - 3} more" if len(dead) > 3 else ""
    return (f"tdebench: warning: {len(dead)} killed run(s) left servers or files behind: {what}{more}; "
            "run `tdebench cleanup` to remove them")


def remove_tree(path: Path, failed: list[str]) -> None:
    """Delete a ``tdebench-*`` directory; a failure is appended to ``failed``."""
    result = CleanupResult("", "")
    _remove(path, result)
    failed.extend(result.failed)


def clean_own_records(directory: Path | None = None) -> list[CleanupResult]:
    """At exit (every run of this process is over): finish what an interrupted clean-up left."""
    done = []
    for path, record in read_records(directory):
        owner = record.get("owner", {})
        if int(owner.get("pid", -1)) == os.getpid() and same_process(os.getpid(), owner.get("started")):
            done.append(clean_record(path, record))
    return done

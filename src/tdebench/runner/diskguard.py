"""Disk guard: refuse a run whose databases cannot fit, and turn "disk full" into a clear error.

Estimate (before any instance is loaded)::

    raw     = the workload's input bytes (sum of data["files"][*]["bytes"], or data["raw_bytes"]),
              else TPC-H's ~1050 MiB per scale factor
    need    = sum over configs of raw * factor(engine) * fs_overhead + fixed(engine)
              (x2 with --reset snapshot: a copy of every loaded database)

Factors are deliberately generous (databases with indexes take 2-4x their input): a guard that
refuses a run that would just fit is cheaper than a disk filled at hour three.
"""

from __future__ import annotations

import errno
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tdebench.encryption import redact
from tdebench.errors import EnvironmentProblem

MIB = 1024 * 1024
TPCH_RAW_PER_SF = 1050 * MIB
FACTORS = {"sqlite": 2.0, "mariadb": 3.0, "postgres": 3.0}
DEFAULT_FACTOR = 4.0
FIXED = {"mariadb": 256 * MIB, "postgres": 128 * MIB}  # system tables, redo logs / WAL of a fresh instance
FS_OVERHEAD = 1.1  # gocryptfs: per-block tags and IVs
REMOTE = {"external"}  # servers tdebench does not manage: their disks are not ours to check
TIGHT = 3.0  # say something when less than this many times the need is free
DISK_FULL_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
DISK_FULL = re.compile(r"no space left on device|database or disk is full|disk full|errcode: 28|errno: 28|"
                       r"disk quota exceeded|could not extend file|the table '[^']*' is full", re.I)


@dataclass(frozen=True)
class Estimate:
    """Bytes a run needs in its work directory, and how that was worked out."""

    need: int
    raw: int
    configs: int
    basis: str


def raw_bytes(plan: Any, data_facts: dict[str, Any]) -> tuple[int, str] | None:
    """Input size of the workload: measured files, a workload's own figure, or the TPC-H rule."""
    files = data_facts.get("files")
    if isinstance(files, dict) and files:
        total = sum(int(f.get("bytes", 0)) for f in files.values() if isinstance(f, dict))
        if total > 0:
            return total, "input files"
    if isinstance(data_facts.get("raw_bytes"), (int, float)):
        return int(data_facts["raw_bytes"]), "workload estimate"
    if getattr(plan, "workload", "tpch") == "tpch":
        return int(TPCH_RAW_PER_SF * plan.sf), f"TPC-H {TPCH_RAW_PER_SF // MIB} MiB per SF"
    return None


def estimate(plan: Any, data_facts: dict[str, Any]) -> Estimate | None:
    """What the plan's databases will occupy, or None when the workload gives no size."""
    raw = raw_bytes(plan, data_facts)
    if raw is None:
        return None
    size, basis = raw
    need = 0.0
    local = [c for c in plan.configs if c.engine not in REMOTE]
    if not local:
        return Estimate(0, size, 0, basis)
    for config in local:
        one = size * FACTORS.get(config.engine, DEFAULT_FACTOR)
        if config.spec.mechanism == "fs":
            one *= FS_OVERHEAD
        if getattr(plan, "reset", "none") == "snapshot":
            one *= 2
        need += one + FIXED.get(config.engine, 0)
    return Estimate(int(need), size, len(local), basis)


def free_bytes(path: Path) -> tuple[Path, int]:
    """(nearest existing directory, bytes free there for an unprivileged writer)."""
    current = path.absolute()
    while not current.exists() and current != current.parent:
        current = current.parent
    return current, shutil.disk_usage(current).free


def human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"


def check_space(plan: Any, data_facts: dict[str, Any], work_root: Path) -> str | None:
    """EnvironmentProblem if ``work_root``'s filesystem cannot hold the plan; a note when space is tight or
    cannot be estimated; else None."""
    est = estimate(plan, data_facts)
    where, free = free_bytes(work_root)
    if est is None:
        return f"disk guard: no size estimate for workload '{plan.workload}'; {human(free)} free in {where}"
    if est.configs == 0:
        return None
    note = (f"disk guard: ~{human(est.need)} needed for {est.configs} config(s) ({human(est.raw)} of input, "
            f"{est.basis}), only {human(free)} free in {where}")
    if free < est.need:
        raise EnvironmentProblem(
            f"not enough disk space for this run: about {human(est.need)} needed for {est.configs} config(s) at "
            f"SF {plan.sf:g} ({human(est.raw)} of input data x 2-4 for each database with its indexes), "
            f"but only {human(free)} free in {where}",
            "free space there, put the instances on a bigger filesystem with --work-dir, lower --sf or run "
            "fewer configs; --skip-disk-check runs anyway")
    return note if free < TIGHT * est.need else None


def is_disk_full(exc: BaseException) -> bool:
    """True for errors that mean a filesystem is full (OSError, or a DBMS saying so)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in DISK_FULL_ERRNOS:
            return True
        if text_is_disk_full(str(current)):
            return True
        current = current.__cause__ or current.__context__
    return False


def text_is_disk_full(text: str) -> bool:
    """True if an error message says a filesystem (or a DBMS's storage) is full."""
    return bool(DISK_FULL.search(text))


def repair_csv_tail(path: Path) -> int:
    """Cut a row torn by a failed append (anything after the last newline); returns bytes removed."""
    try:
        with open(path, "rb+") as handle:
            size = handle.seek(0, 2)
            start = max(0, size - 65536)
            handle.seek(start)
            tail = handle.read()
            cut = tail.rfind(b"\n")
            keep = start + cut + 1 if cut >= 0 else start
            if keep < size:
                handle.truncate(keep)
                return size - keep
    except OSError:
        pass
    return 0


class Reserve:
    """A small file in the run directory, freed when the disk fills up so that the manifest can still
    say what happened and the torn tail of measurements.csv can be cut."""

    SIZE = 64 * 1024

    def __init__(self, directory: Path) -> None:
        self.path = directory / ".tdebench-reserve"

    def take(self) -> None:
        try:
            if not self.path.exists():
                with open(self.path, "wb") as handle:
                    handle.write(b"\0" * self.SIZE)
                    handle.flush()
        except OSError:
            self.path.unlink(missing_ok=True)

    def release(self) -> None:
        self.path.unlink(missing_ok=True)


def disk_full_error(exc: BaseException, rundir: Any, work_root: Path, reserve: Reserve,
                    finish_manifest: Callable[[str], None]) -> EnvironmentProblem:
    """A run hit a full disk: free the reserve, cut a torn row, let the manifest say what happened;
    returns the error naming where, how many rows are intact and how to continue."""
    reserve.release()
    repair_csv_tail(rundir.measurements_path)
    reason = redact(str(exc)).splitlines()[0][:300] if str(exc) else type(exc).__name__
    _, free = free_bytes(rundir.path)
    in_rundir = free < 2 * Reserve.SIZE
    where = f"the run directory {rundir.path}" if in_rundir else f"the instances' work directory ({work_root})"
    move = "move the run directory to a bigger filesystem" if in_rundir else "use --work-dir on a bigger filesystem"
    try:
        finish_manifest(f"failed: disk full in {where}: {reason}")
    except OSError:
        pass
    try:
        rows = max(0, len(rundir.measurements_path.read_bytes().splitlines()) - 1)
    except OSError:
        rows = 0
    return EnvironmentProblem(
        f"the disk filled up in {where} ({reason}); the {rows} measurement rows written so far are intact "
        f"in {rundir.measurements_path}",
        f"free space there (or {move}), then continue with: tdebench run --resume {rundir.path}")

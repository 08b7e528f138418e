"""Disk guard: refuse a run whose databases cannot fit, and turn "disk full" into a clear error.

Estimate (before any instance is loaded), per config with ``raw`` = the workload's input bytes (sum of
``data["files"][*]["bytes"]``, or ``data["raw_bytes"]``, else the workload's own estimate from its options,
e.g. TPC-H's ~1050 MiB per scale factor)::

    log   = min(raw * f.log, f.log_cap)                   PostgreSQL's WAL while loading (capped); else 0
    fixed = f.fixed                                       catalogs, first WAL segments, MariaDB's redo log
    peak  = raw * f.peak + log + fixed                    the most the instance takes while loading
    final = raw * f.final + log + fixed                   the loaded instance (what a snapshot copies)
    need  = sum over configs of peak, or of max(peak, 2 * final) with --reset snapshot

``f`` is the :class:`~tdebench.api.footprint.Footprint` the config's engine gives for its encryption mechanism
and settings (:meth:`Engine.disk_footprint <tdebench.api.engine.Engine.disk_footprint>`), measured with
``benchmarks/disk_footprint.py`` at TPC-H SF 0.01, 0.1 and 1 (table in docs/reliability.md, "Disk guard"):
each factor is the steepest measured growth per input byte x 1.25, rounded up to 0.1; each fixed part the
measured intercept x 1.25, rounded up to 16 MiB. The peak factor covers what the final size does not show:
MariaDB's table rebuilds and sort files, PostgreSQL's sort spills (from SF 1 on) and pgcrypto's staging
tables; one power-test trial added at most 5% to the load's peak.

The log is kept apart because it stops growing. PostgreSQL recycles WAL at checkpoints: pg_wal grew 1.4x
(plain) to 7.1x (PGP columns) the input, but peaked at exactly max_wal_size (4GB, tdebench's default) for
PGP at SF 1, and at max_wal_size + one 16 MiB segment with max_wal_size=128MB; as that is a soft limit,
the cap is 1.25x it. MariaDB's redo log is one file of innodb_log_file_size, fully allocated when the
instance is created: a fixed part read from the settings, never scaled. SQLite's rollback journal is in
its peak factor.

Summing per-config needs is safe: configs load one after the other, and meanwhile each earlier one
occupies no more than its own need. Workloads other than TPC-H give their own ``raw`` and get the TPC-H
factors; engines not measured here (MySQL) get :data:`tdebench.api.footprint.UNMEASURED`.
"""

from __future__ import annotations

import errno
import re
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tdebench.api.footprint import Footprint
from tdebench.encryption import redact
from tdebench.engines import get_engine
from tdebench.errors import EnvironmentProblem

WAL_CAP_MARGIN = 1.25  # max_wal_size is a soft limit (the engine applies it to its footprint's log_cap)
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


def raw_bytes(data_facts: dict[str, Any], workload_estimate: int | None = None) -> tuple[int, str] | None:
    """Input size of the workload: measured files, a workload's own figure (from its data or, before the data
    exist, from its options)."""
    files = data_facts.get("files")
    if isinstance(files, dict) and files:
        total = sum(int(f.get("bytes", 0)) for f in files.values() if isinstance(f, dict))
        if total > 0:
            return total, "input files"
    if isinstance(data_facts.get("raw_bytes"), (int, float)):
        return int(data_facts["raw_bytes"]), "workload estimate"
    if workload_estimate is not None:
        return int(workload_estimate), "workload estimate from its options"
    return None


def footprint(config: Any) -> Footprint:
    """The measured footprint of ``config``'s engine with its spec and settings (the engine's own figures)."""
    return get_engine(config.engine).disk_footprint(config.spec, dict(getattr(config, "settings", None) or {}))


def config_need(config: Any, raw: int, snapshot: bool) -> float:
    """Bytes one config needs at most: its load's peak, or with a snapshot also the database and its copy."""
    f = footprint(config)
    log = min(raw * f.log, f.log_cap)
    peak = raw * f.peak + log + f.fixed
    final = raw * f.final + log + f.fixed
    return max(peak, 2 * final) if snapshot else peak


def estimate(plan: Any, data_facts: dict[str, Any], workload_estimate: int | None = None) -> Estimate | None:
    """What the plan's databases will occupy, or None when the workload gives no size."""
    raw = raw_bytes(data_facts, workload_estimate)
    if raw is None:
        return None
    size, basis = raw
    local = [c for c in plan.configs if not get_engine(c.engine).remote]
    snapshot = getattr(plan, "reset", "none") == "snapshot"
    need = sum(config_need(c, size, snapshot) for c in local)
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


def check_space(plan: Any, data_facts: dict[str, Any], work_root: Path, workload_estimate: int | None = None,
                what: str = "") -> str | None:
    """EnvironmentProblem if ``work_root``'s filesystem cannot hold the plan; a note when space is tight or
    cannot be estimated; else None. ``what`` names the workload's size for the message (e.g. "SF 1")."""
    est = estimate(plan, data_facts, workload_estimate)
    where, free = free_bytes(work_root)
    if est is None:
        return f"disk guard: no size estimate for workload '{plan.workload}'; {human(free)} free in {where}"
    if est.configs == 0:
        return None
    note = (f"disk guard: ~{human(est.need)} needed for {est.configs} config(s) ({human(est.raw)} of input, "
            f"{est.basis}); {human(free)} free in {where} is less than {TIGHT:g}x that, little margin if the "
            f"estimate is low")
    if free < est.need:
        raise EnvironmentProblem(
            f"not enough disk space for this run: about {human(est.need)} needed for {est.configs} config(s)"
            f"{' at ' + what if what else ''} ({human(est.raw)} of input data times each engine's and encryption's measured "
            f"footprint with indexes, WAL and sort files, see docs/reliability.md), "
            f"but only {human(free)} free in {where}",
            "free space there, put the instances on a bigger filesystem with --work-dir, load less data (e.g. a "
            "lower --sf) or run fewer configs; --skip-disk-check runs anyway")
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

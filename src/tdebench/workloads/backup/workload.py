"""The backup workload: backup and restore durations, sizes, and whether each backup is encrypted.

Data: TPC-H at ``--sf`` (loaded as the tpch workload does). Per trial and backup kind of the config's engine:
the backup (step ``<kind>``: elapsed, bytes on disk, server and tool CPU), a scan of the backup for the canary
markers and TPC-H plaintext (untimed; verdicts in ``backups.json``), the restore (step ``<kind>_restore``:
elapsed, server and tool CPU) with row counts checked, then the backup files are deleted.
"""

from __future__ import annotations

import shutil
import time
import importlib
from pathlib import Path
from typing import Any

from tdebench.api.dialect import Dialect
from tdebench.api.engine import threat_probes
from tdebench.api.events import RunListener
from tdebench.api.plan import RunPlan
from tdebench.api.trial import ConfigState, Recorder, TrialResult
from tdebench.api.workload import Need, RunFiles
from tdebench.errors import UsageError
from tdebench.measure.storage import storage_breakdown
from tdebench.results.rundir import utc_now, write_json
from tdebench.workloads.backup import tools
from tdebench.workloads.backup.kinds import BackupKind, Context, count_rows
from tdebench.workloads.backup.options import parse_options
from tdebench.workloads.backup.scan import canary_markers, scan_backup
from tdebench.workloads.crud.meter import measured
from tdebench.workloads.crud.workload import record_storage
from tdebench.workloads.tpch.loader import load_tpch
from tdebench.workloads.tpch.on_tpch_data import OnTpchData
from tdebench.workloads.backup.presentation import PRESENTATION

TEST = "backup"
# backup tool an engine declares (Dialect.backup_tools) -> the module with its kinds and the kind (without "_gz")
_TOOL_KINDS = {"mariadb-backup": ("mariadb_kinds", "mariadb_backup"), "mariadb-dump": ("mariadb_kinds", "mariadb_dump"),
               "pg_basebackup": ("postgres_kinds", "pg_basebackup"), "pg_dump": ("postgres_kinds", "pg_dump"),
               "sqlite-backup-api": ("sqlite_kinds", "sqlite_backup_api"), "sqlite-dump": ("sqlite_kinds", "vacuum_into")}


def engine_kinds(dialect: Dialect) -> list[BackupKind]:
    """The backup kinds of the tools the engine declares, each only when its own tool is named (none for engines
    without any): an engine naming one SQLite tool does not get the other's kinds."""
    declared = [_TOOL_KINDS[t] for t in dialect.backup_tools if t in _TOOL_KINDS]
    bases = {base for _, base in declared}
    modules = dict.fromkeys(m for m, _ in declared)
    return [kind for m in modules for kind in importlib.import_module(f"tdebench.workloads.backup.{m}").kinds()
            if kind.info.name.removesuffix("_gz") in bases]


def backup_location(ctx: Context) -> str:
    """Where the backup was written, as the threat model states it: the run's work directory, beside (never inside)
    the instance's files, so no encryption of the instance's files or filesystem (fscrypt, gocryptfs) covers it."""
    inside = any(ctx.scratch.is_relative_to(p) for p in threat_probes(ctx.state.instance).disk_paths())
    return ("inside the instance's directory" if inside else
            "the run's work directory, outside the instance's files and any encrypted filesystem holding them")


class BackupWorkload(OnTpchData):
    """Backups with and without compression per engine, timed, sized, restored and scanned."""

    name = "backup"
    shown = PRESENTATION
    needs = (Need("the engine declares no backup tool tdebench can drive",
                  lambda e: bool(e.dialect.backup_tools)),)

    def __init__(self, plan: RunPlan, rundir: RunFiles) -> None:
        super().__init__(plan, rundir)
        self.options = parse_options(plan.workload_options)
        self.counts: dict[str, dict[str, int]] = {}
        self.verdicts: dict[str, Any] = {"schema_version": 1, "kinds": {}, "configs": {}}

    def load(self, state: ConfigState, rec: Recorder, ui: RunListener) -> dict[str, Any]:
        rec.workload = self.name
        ui.task_started(f"load-{state.label}", f"load {state.label}", None)
        try:
            result = load_tpch(state.instance, state.dialect, self.data_dir)
        finally:
            ui.task_finished(f"load-{state.label}")
        for table, (rows, seconds) in result.tables.items():
            rec.add("load", table, "elapsed", seconds, "s")
            rec.add("load", table, "rows", rows, "rows")
        rec.add("load", "total", "elapsed", result.total_seconds, "s")
        self.counts[state.label] = {t: rows for t, (rows, _) in result.tables.items()}
        breakdown = storage_breakdown(state.instance, list(self.schema_tables))
        record_storage(rec, breakdown)
        return {"load_seconds": round(result.total_seconds, 6), "storage_tables": breakdown}

    def check_dialect(self, label: str, dialect: Dialect) -> None:
        """Before any work: the engine must offer a backup kind the options select (its declared tools)."""
        if not self._kinds(dialect):
            tools_ = ", ".join(dialect.backup_tools) or "none"
            raise UsageError(f"--workload backup has nothing to run on '{label}' ({dialect.product}): no backup kind "
                             f"selected (kinds: {', '.join(self.options.kinds)}; compression: "
                             f"{self.options.compression}; the engine's backup tools: {tools_})",
                             "choose kinds the engine has (see docs/workloads/backup.md), or another engine")

    def _kinds(self, dialect: Dialect) -> list[BackupKind]:
        return [k for k in engine_kinds(dialect) if self.options.wants(k.info.name)]

    def _context(self, state: ConfigState) -> Context:
        scratch = Path(state.instance.workdir) / f"backups-{state.label}"
        tools.discard(scratch)
        scratch.mkdir(parents=True, mode=0o700)
        return Context(state, list(self.schema_tables), self.counts.get(state.label, {}), scratch)

    def _one(self, ctx: Context, kind: BackupKind, markers: list[str], rec: Recorder, block: int) -> list[str]:
        """Backup, scan, restore and check one kind; returns failures."""
        name, state = kind.info.name, ctx.state
        tool0 = tools.tool_cpu()
        with measured(state, name) as t:
            artifact = kind.backup(ctx)
        tool1 = tools.tool_cpu()
        size = tools.tree_bytes(artifact)
        rec.add(TEST, name, "elapsed", t.seconds, "s")
        rec.add(TEST, name, "bytes", size, "bytes")
        rec.add(TEST, name, "tool_cpu", tool1 - tool0, "s")
        if t.server_cpu is not None:
            rec.add(TEST, name, "server_cpu", t.server_cpu, "s")
        scan = scan_backup(kind.scan_paths(ctx, artifact), markers, self.known_plaintext)
        self._verdict(state, kind, scan.to_json() | {"bytes": size, "block": block, "at": utc_now(),
                                                     "location": backup_location(ctx)})
        with measured(state, f"{name}_restore") as r:
            seconds = kind.restore(ctx, artifact)
        rec.add(TEST, f"{name}_restore", "elapsed", seconds, "s")
        rec.add(TEST, f"{name}_restore", "tool_cpu", tools.tool_cpu() - tool1, "s")
        if r.server_cpu is not None:
            rec.add(TEST, f"{name}_restore", "server_cpu", r.server_cpu, "s")
        counts = kind.restored_counts(ctx)
        kind.cleanup(ctx)
        for path in ctx.scratch.iterdir():
            tools.discard(path)
        if counts != ctx.counts:
            differ = [f"{t} {counts.get(t)} (expected {n})" for t, n in ctx.counts.items() if counts.get(t) != n]
            return [f"{name}: restored row counts differ: {', '.join(differ[:4])}"]
        return []

    def _verdict(self, state: ConfigState, kind: BackupKind, entry: dict[str, Any]) -> None:
        self.verdicts["kinds"][kind.info.name] = kind.info.to_json()
        config = self.verdicts["configs"].setdefault(state.label, {
            "engine": state.config.engine, "encryption": str(state.config.spec), "backups": {}})
        previous = config["backups"].get(kind.info.name)
        if previous is not None and previous.get("encrypted") != entry["encrypted"]:
            entry["note"] = "the verdict changed between trials"
        config["backups"][kind.info.name] = entry
        write_json(self.rundir.path / "backups.json", self.verdicts)

    def trial(self, state: ConfigState, block: int, rec: Recorder) -> TrialResult:
        rec.workload = self.name
        result = TrialResult()
        markers = canary_markers(state.instance)
        ctx = self._context(state)
        total = time.perf_counter()
        kinds = self._kinds(state.dialect)
        if not kinds:
            result.failures.append(f"no backup kind selected for engine {state.config.engine} "
                                   f"(kinds: {', '.join(self.options.kinds)}; compression: {self.options.compression})")
        try:
            for kind in kinds:
                try:
                    result.failures += self._one(ctx, kind, markers, rec, block)
                except Exception as exc:  # noqa: BLE001 - one failing tool must not hide the others
                    rec.add(TEST, kind.info.name, "elapsed", float("nan"), "s", status="failed")
                    result.failures.append(f"{kind.info.name}: {type(exc).__name__}: {exc}")
                    try:
                        kind.cleanup(ctx)
                    except Exception:  # noqa: BLE001 - the failure above is what matters
                        pass
        finally:
            shutil.rmtree(ctx.scratch, ignore_errors=True)
        rec.add(TEST, "total", "elapsed", time.perf_counter() - total, "s")
        return result

    def validate(self, state: ConfigState, rec: Recorder, ui: RunListener) -> list[str]:
        rec.workload = self.name
        expected = self.counts.get(state.label, {})
        found = count_rows(state.instance.connect(), expected, str)
        return [f"{state.label}: {t} holds {found[t]} rows, expected {n}" for t, n in expected.items() if found[t] != n]

"""``tdebench import``: console logs of ``tdebench script`` scripts -> a normal run directory.

A new directory gets a manifest (the current schema_version) and measurements.csv; an existing one gets the new config
(or a new trial of a known config) added, so plain and TDE logs imported one after the other are compared like
twins of an automated run. Trial *n* of every config is block *n* (warm-up logs: block 0, trial 0).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tdebench import __version__
from tdebench.encryption import parse_spec
from tdebench.errors import UsageError
from tdebench.sqltext.dialects import SQLGLOT_OF, sql_dialect
from tdebench.workloads.tpch.dialects import check_dialect
from tdebench.manual.logparse import ParsedLog, StreamRun, parse_log
from tdebench.results.rundir import Measurement, RunDirectory, utc_now

_LABEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
NAN = float("nan")


@dataclass
class ImportRequest:
    """Everything ``tdebench import`` was asked to do."""

    run_dir: Path
    dialect: str
    config: str
    logs: list[Path]
    encryption: str = "none"
    trial: int | None = None
    warmup: bool = False
    engine: str | None = None
    engine_version: str | None = None
    settings: dict[str, str] = field(default_factory=dict)
    sf: float | None = None
    command_line: list[str] = field(default_factory=list)


@dataclass
class ImportResult:
    """What was imported (for the terminal and the tests)."""

    run_dir: Path
    config: str
    trials: list[int]
    rows: int
    status: Counter[str]
    problems: list[str]


def _check(req: ImportRequest) -> tuple[str, str, str]:
    dialect = check_dialect(req.dialect)
    if not _LABEL.match(req.config):
        raise UsageError(f"bad config label '{req.config}'",
                         "use letters, digits, '.', '_' or '-' (at most 64), e.g. --config sqlserver-tde-aes256")
    spec = str(parse_spec(req.encryption or "none"))
    if not req.logs:
        raise UsageError("no log files given", "pass the console logs to import, e.g. stream00.log")
    if req.trial is not None and req.trial < 1:
        raise UsageError(f"--trial must be 1 or more, not {req.trial}", "trials are numbered from 1")
    if req.warmup and req.trial is not None:
        raise UsageError("--warmup and --trial exclude each other", "a warm-up log is always trial 0")
    engine = (req.engine or sql_dialect(dialect).engine).strip().lower()
    return dialect, spec, engine


def _scale_factor(req: ImportRequest, logs: list[ParsedLog], manifest: dict[str, Any] | None) -> float:
    seen: set[float] = set()
    for log in logs:
        for run in log.runs:
            if "sf" in run.header:
                try:
                    seen.add(float(run.header["sf"]))
                except ValueError:
                    pass
    if req.sf is not None:
        seen.add(float(req.sf))
    plan = (manifest or {}).get("plan", {})
    plan_sf = plan.get("workload_options", {}).get("sf", plan.get("sf"))  # schema 1 kept it at the top
    if plan_sf is not None:
        seen.add(float(plan_sf))
    if len(seen) > 1:
        raise UsageError(f"the logs and the run directory disagree on the scale factor: {sorted(seen)}",
                         "import logs of one scale factor per run directory")
    if not seen:
        raise UsageError("the scale factor is unknown (the logs have no tdebench:script line)", "pass --sf")
    return seen.pop()


def _check_logs(dialect: str, logs: list[ParsedLog]) -> list[str]:
    problems: list[str] = []
    for log in logs:
        for run in log.runs:
            logged = run.header.get("dialect")
            # MySQL's and MariaDB's logs (one SQL, one client format) import into each other
            if logged and SQLGLOT_OF.get(logged, logged) != SQLGLOT_OF[dialect]:
                raise UsageError(f"{log.name} was written for dialect {logged}, not {dialect}",
                                 f"pass --dialect {logged}")
        if log.timings == 0:
            raise UsageError(f"{log.name} has markers but not a single timing line",
                             "turn the client's timing on and rerun (see the README next to the scripts)")
        problems += [f"{log.name}: {note}" for note in log.notes]
    return problems


def _config_entry(req: ImportRequest, dialect: str, spec: str, engine: str) -> dict[str, Any]:
    return {"label": req.config, "engine": engine, "encryption": spec,
            "engine_version": req.engine_version or "unknown (imported)", "dialect": dialect,
            "settings": dict(req.settings), "source": "manual import of console logs",
            "verification": "not possible: measured outside tdebench; encryption as declared by --encryption"}


def _open_run_dir(path: Path) -> tuple[RunDirectory, dict[str, Any] | None]:
    rundir = RunDirectory(path)
    if rundir.manifest_path.is_file() and rundir.measurements_path.is_file():
        return rundir, rundir.read_manifest()
    return RunDirectory.create(path), None


def _new_manifest(run_id: str, dialect: str, sf: float) -> dict[str, Any]:
    return {
        "tool": {"name": "tdebench", "version": __version__},
        "run_id": run_id, "command_line": [], "created_at": utc_now(), "status": "completed",
        "host": "unknown (imported)",
        "plan": {"workload": "tpch", "mode": "manual", "dialect": dialect, "workload_options": {"sf": sf, "tests": []},
                 "trials": 0, "warmup_trials": 0, "cache": "unknown", "seed": None, "configs": [], "blocks": []},
        "data": {"generator": "unknown (imported)", "sf": sf},
        "configs": [], "imports": [],
    }


def _trial_numbers(req: ImportRequest, logs: list[ParsedLog], existing: list[dict[str, str]]) -> dict[int, int]:
    """Trial of every stream run (keyed by id()), the k-th run of a stream going to trial base + k."""
    mine = [r for r in existing if r["config"] == req.config]
    if req.warmup:
        return {id(run): 0 for log in logs for run in log.runs}
    base = req.trial if req.trial is not None else 1 + max((int(r["trial"]) for r in mine), default=0)
    taken = {(int(r["trial"]), r["stream"]) for r in mine}
    seen: Counter[int] = Counter()
    trials: dict[int, int] = {}
    for log in logs:
        for run in log.runs:
            trial = base + seen[run.stream]
            seen[run.stream] += 1
            if (trial, str(run.stream)) in taken:
                raise UsageError(f"config {req.config} already has stream {run.stream} of trial {trial}",
                                 "pass --trial with an unused number (or import into a new --out directory)")
            trials[id(run)] = trial
    return trials


def _stamp(text: str | None) -> str:
    if not text:
        return ""
    when = datetime.fromisoformat(text).replace(tzinfo=timezone.utc)
    return when.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _rows(run: StreamRun, trial: int, ctx: dict[str, Any]) -> list[Measurement]:
    status_ok = "warmup" if ctx["warmup"] else "ok"
    block = 0 if ctx["warmup"] else trial
    started = _stamp(run.begin)

    def row(step: str, metric: str, value: float, status: str, stream: int | None = run.stream) -> Measurement:
        return Measurement(ctx["run_id"], block, trial, ctx["config"], ctx["engine"], ctx["encryption"], "tpch",
                           run.test, step, metric, value, "s", stream, started, status)

    rows: list[Measurement] = []
    results = run.results()
    for q in results:
        step = f"q{q.number:02d}"
        if q.status != "ok":
            rows.append(row(step, "elapsed", NAN, q.status))
            continue
        rows.append(row(step, "elapsed", q.elapsed, status_ok))
        if q.cpu is not None:
            rows.append(row(step, "cpu", q.cpu, status_ok))
        if q.compile is not None:
            rows.append(row(step, "compile", q.compile, status_ok))
    statuses = {q.status for q in results}
    total_status = status_ok if statuses == {"ok"} else ("failed" if "failed" in statuses else "missing")
    total = round(sum(q.elapsed for q in results), 6) if total_status == status_ok else NAN
    rows.append(row("total", "elapsed", total, total_status))
    wall = run.wall_seconds()
    rows.append(row("wall", "elapsed", NAN if wall is None else wall,
                    total_status if wall is not None else "missing"))
    return rows


def _throughput_rows(runs: list[tuple[StreamRun, int]], ctx: dict[str, Any]) -> list[Measurement]:
    """Throughput test wall time per trial: earliest stream start to latest stream end (server clock)."""
    by_trial: dict[int, list[StreamRun]] = {}
    for run, trial in runs:
        if run.stream > 0:
            by_trial.setdefault(trial, []).append(run)
    rows = []
    for trial, streams in by_trial.items():
        if not all(r.begin and r.end for r in streams):
            continue
        begin = min(datetime.fromisoformat(r.begin or "") for r in streams)
        end = max(datetime.fromisoformat(r.end or "") for r in streams)
        ok = all(q.status == "ok" for r in streams for q in r.results())
        status = ("warmup" if ctx["warmup"] else "ok") if ok else "failed"
        rows.append(Measurement(ctx["run_id"], 0 if ctx["warmup"] else trial, trial, ctx["config"], ctx["engine"],
                                ctx["encryption"], "tpch", "throughput", "wall", "elapsed",
                                round((end - begin).total_seconds(), 6), "s", None,
                                _stamp(begin.isoformat()), status))
    return rows


def _provenance(req: ImportRequest, logs: list[ParsedLog], trials: dict[int, int]) -> dict[str, Any]:
    entries = []
    for log in logs:
        streams = []
        for run in log.runs:
            results = run.results()
            count = Counter(q.status for q in results)
            streams.append({
                "stream": run.stream, "test": run.test, "trial": trials[id(run)], "begin": run.begin,
                "end": run.end, "ok": count["ok"], "failed": count["failed"], "missing": count["missing"],
                "not_ok": {f"q{q.number:02d}": f"{q.status}: {q.reason}" for q in results if q.status != "ok"},
                "warnings": {f"q{q.number:02d}": q.warnings for q in results if q.warnings},
                "notes": run.notes, "script": run.header,
            })
        entries.append({"file": log.name, "sha256": log.sha256, "bytes": log.size, "timing_lines": log.timings,
                        "streams": streams, "notes": log.notes})
    return {"imported_at": utc_now(), "config": req.config, "warmup": req.warmup,
            "command_line": list(req.command_line), "logs": entries}


def _update_plan(manifest: dict[str, Any], rows: list[dict[str, str]]) -> None:
    plan = manifest.setdefault("plan", {})
    plan["configs"] = [{"label": c["label"], "engine": c["engine"], "encryption": c["encryption"]}
                       for c in manifest.get("configs", [])]
    measured = [r for r in rows if r["status"] != "warmup" and r["block"] != "0"]
    plan.setdefault("workload_options", {})["tests"] = sorted({r["test"] for r in rows}, key=lambda t: (t != "power", t))
    plan["trials"] = max((int(r["trial"]) for r in measured), default=0)
    plan["warmup_trials"] = 1 if any(r["block"] == "0" for r in rows) else 0
    order: dict[int, list[str]] = {}
    for r in measured:
        labels = order.setdefault(int(r["block"]), [])
        if r["config"] not in labels:
            labels.append(r["config"])
    plan["blocks"] = [{"block": b, "warmup": False, "order": labels} for b, labels in sorted(order.items())]


def import_logs(req: ImportRequest) -> ImportResult:
    """Parse ``req.logs`` and add them to the run directory ``req.run_dir``."""
    dialect, spec, engine = _check(req)
    for path in req.logs:
        if not path.is_file():
            raise UsageError(f"log file {path} does not exist", "pass the console logs to import")
    logs = [parse_log(path, dialect) for path in req.logs]
    problems = _check_logs(dialect, logs)
    manifest_path = req.run_dir / "manifest.json"
    existing_manifest = RunDirectory(req.run_dir).read_manifest() if manifest_path.is_file() else None
    sf = _scale_factor(req, logs, existing_manifest)
    entry = _config_entry(req, dialect, spec, engine)
    for known in (existing_manifest or {}).get("configs", []):
        if known.get("label") == req.config and (known.get("engine"), known.get("encryption")) != (engine, spec):
            raise UsageError(f"config {req.config} is already in {req.run_dir} as {known.get('engine')} "
                             f"{known.get('encryption')}, not {engine} {spec}",
                             "use another --config label, or the same --encryption/--engine as before")
    rundir, manifest = _open_run_dir(req.run_dir)
    if manifest is None:
        stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        manifest = _new_manifest(f"{stamp}-manual-{dialect}", dialect, sf)
    trials = _trial_numbers(req, logs, rundir.read_measurements())
    ctx = {"run_id": manifest.get("run_id", ""), "config": req.config, "engine": engine, "encryption": spec,
           "warmup": req.warmup}
    pairs = [(run, trials[id(run)]) for log in logs for run in log.runs]
    rows = [m for run, trial in pairs for m in _rows(run, trial, ctx)] + _throughput_rows(pairs, ctx)
    rundir.append(rows)
    if not any(c.get("label") == req.config for c in manifest.setdefault("configs", [])):
        manifest["configs"].append(entry)
    manifest.setdefault("imports", []).append(_provenance(req, logs, trials))
    manifest["command_line"] = list(req.command_line) or manifest.get("command_line", [])
    manifest.update(status="completed", finished_at=utc_now())
    _update_plan(manifest, rundir.read_measurements())
    manifest.pop("schema_version", None)
    rundir.write_manifest(manifest)
    return ImportResult(req.run_dir, req.config, sorted(set(trials.values())), len(rows),
                        Counter(m.status for m in rows if m.metric == "elapsed" and m.step.startswith("q")),
                        problems + [f"{log.name}: {n}" for log in logs for run in log.runs for n in run.notes])


__all__ = ["ImportRequest", "ImportResult", "import_logs"]

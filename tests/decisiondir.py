"""A synthetic decision directory (decision.json, a cost run, switching runs) with known effects, for the unit tests
of tdebench.decide: the sub-runs are run directories as tdebench run writes them (manifest, measurements.csv,
verification.json), and their reports are built by the real report code when the decision first reads them."""

from __future__ import annotations

import csv
import json
import math
from pathlib import Path
from typing import Any

import numpy as np

from tdebench.decide.plan import SubRun

ENGINE = "mariadb"
SPECS = ("none", "tde:aes-256-ctr", "fs:fscrypt", "fs:gocryptfs")
COLUMNS = ["run_id", "block", "trial", "config", "engine", "encryption", "workload", "test", "stream", "step",
           "metric", "value", "unit", "started_at", "status"]
#: plain seconds per step, weight, kind
STEPS = {"q1_orders": (0.010, 20.0, "query"), "q2_report": (0.050, 1.0, "query"), "w1_new_orders": (0.020, 2.0, "write")}
#: true overhead per spec and step kind (queries, writes): gocryptfs clearly dearest, the other two close
EFFECTS = {"none": (0.0, 0.0), "tde:aes-256-ctr": (0.01, 0.30), "fs:fscrypt": (0.02, 0.05),
           "fs:gocryptfs": (0.40, 0.60)}


def label(spec: str) -> str:
    return f"{ENGINE}-{spec.replace(':', '-')}"


def _write_csv(path: Path, rows: list[dict[str, Any]]) -> None:
    with open(path, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)


def _row(run: str, block: int, spec: str, workload: str, test: str, step: str, metric: str, value: float,
         unit: str, status: str = "ok") -> dict[str, Any]:
    return {"run_id": run, "block": block, "trial": block, "config": label(spec), "engine": ENGINE,
            "encryption": spec, "workload": workload, "test": test, "stream": "", "step": step, "metric": metric,
            "value": f"{value:.9f}", "unit": unit, "started_at": "2026-11-29T00:00:00.000Z", "status": status}


def _manifest(run: str, workload: str, specs: tuple[str, ...], **extra: Any) -> dict[str, Any]:
    configs = [{"label": label(s), "engine": ENGINE, "encryption": s, "engine_version": "10.11.19-MariaDB",
                "storage_bytes": 5_000_000} for s in specs]
    return {"schema_version": 2, "run_id": run, "status": "completed", "created_at": "2026-11-29T00:00:00Z",
            "plan": {"workload": workload, "trials": 6, "configs": configs}, "configs": configs, **extra}


def _threat_rows(spec: str) -> list[dict[str, Any]]:
    plain, fs = spec == "none", spec.startswith("fs:")
    keys = [] if plain else [{"key": f"{spec} key", "where": "a key file beside the data" if not fs else "memory",
                              "on_disk": not fs, "beside_data": not fs, "mode": "0600" if not fs else None,
                              "protected_by": "a file key on tmpfs" if not fs else "not stored", "found_in_clear": []}]

    def row(rid: str, attacker: str, status: str, summary: str, evidence: dict[str, Any] | None = None) -> dict:
        return {"id": rid, "attacker": attacker, "status": status, "summary": summary, "evidence": evidence or {}}

    return [row("data_dir", "copy of the data directory", "exposed" if plain else "protected",
                "canary-1 ×4 in ibdata1" if plain else "no canary or known plaintext"),
            row("disk", "copy of the whole disk (key files and configuration included)",
                "exposed" if plain else "protected", "scanned", {"keys": keys}),
            row("live_host", "a process on the running host reading its files",
                "exposed" if plain or fs else "protected", "files read as root"),
            row("backups", "backups", "not checked", "no backup was made in this run: run --workload backup"),
            row("select_user", "a database user with SELECT", "exposed", "4 canaries read")]


#: the headlines a workload that declares them records (the weighted totals of its reads and of its writes)
HEADLINES = [{"name": "reads", "test": "sql", "step": "reads", "metric": "elapsed", "title": "reads, weighted"},
             {"name": "writes", "test": "sql", "step": "writes", "metric": "elapsed", "title": "writes, weighted"}]


def _cost_run(path: Path, blocks: int, headlines: bool = False,
              effects: dict[str, tuple[float, float]] | None = None) -> None:
    rng = np.random.default_rng(11)
    rows = []
    for block in range(0, blocks + 1):
        status = "warmup" if block == 0 else "ok"
        drift = math.exp(rng.normal(0, 0.01))
        for spec in SPECS:
            totals = {"query": 0.0, "write": 0.0}
            for step, (base, weight, kind) in STEPS.items():
                effect = (effects or EFFECTS)[spec][0 if kind == "query" else 1]
                value = base * (1 + effect) * drift * math.exp(rng.normal(0, 0.01))
                totals[kind] += weight * value
                rows.append(_row("cost", block, spec, "sql", "sql", step, "elapsed", value, "s", status))
            rows.append(_row("cost", block, spec, "sql", "sql", "total", "elapsed", sum(totals.values()), "s", status))
            if headlines:
                rows.append(_row("cost", block, spec, "sql", "sql", "reads", "elapsed", totals["query"], "s", status))
                rows.append(_row("cost", block, spec, "sql", "sql", "writes", "elapsed", totals["write"], "s", status))
    path.mkdir(parents=True)
    _write_csv(path / "measurements.csv", rows)
    steps = [{"name": n, "kind": k, "weight": w} for n, (_, w, k) in STEPS.items()]
    extra = {"headlines": HEADLINES} if headlines else {}
    (path / "manifest.json").write_text(json.dumps(_manifest("cost", "sql", SPECS, data={"steps": steps}, **extra)))
    verification = {"configs": {label(s): {"encryption": s, "threats": {
        "rows": _threat_rows(s), "sentence": "" if s == "none" else f"{s} stops what it stops.",
        "final_pass": True}} for s in SPECS}}
    (path / "verification.json").write_text(json.dumps(verification))


def _switch_run(path: Path, spec: str, online: bool) -> None:
    rng = np.random.default_rng(5)
    cycle = "t1" if online else "offline"
    rows = []
    for block in (1, 2, 3):
        before = 3000 * math.exp(rng.normal(0, 0.02))
        phases = {"before": before, "during_on": before * 0.6 * math.exp(rng.normal(0, 0.03)),
                  "after_on": before * math.exp(rng.normal(0, 0.02))}
        for phase, tpm in phases.items():
            if online or phase != "during_on":
                rows.append(_row("sw", block, spec, "encrypt", "encrypt", f"{cycle}.{phase}", "tpm", tpm, "tpm"))
                rows.append(_row("sw", block, spec, "encrypt", "encrypt", f"{cycle}.{phase}", "latency_p95",
                                 0.01 / (tpm / before), "s"))
        rows.append(_row("sw", block, spec, "encrypt", "encrypt", f"{cycle}.on", "time_to_done",
                         4.0 + block * 0.1, "s"))
        if online:
            rows.append(_row("sw", block, spec, "encrypt", "encrypt", f"{cycle}.on", "restart_seconds",
                             2.0 + block * 0.1, "s"))
        else:
            rows.append(_row("sw", block, spec, "encrypt", "encrypt", f"{cycle}.on", "peak_extra_bytes",
                             6_000_000 + block, "bytes"))
        for metric in ("canary_hits_in_scope", "known_plaintext_hits_in_scope", "hits_outside_scope"):
            rows.append(_row("sw", block, spec, "encrypt", "encrypt", f"{cycle}.on.scan", metric, 0, "hits"))
    path.mkdir(parents=True)
    _write_csv(path / "measurements.csv", rows)
    (path / "manifest.json").write_text(json.dumps(_manifest("sw", "encrypt", (spec,), data={"warehouses": 1})))


def make_decision(root: Path, against: list[dict[str, str]] | None = None, blocks: int = 6,
                  headlines: bool = False, effects: dict[str, tuple[float, float]] | None = None) -> Path:
    """A completed decision of mariadb: TDE (switched online), fscrypt (switched offline), gocryptfs (not switched)."""
    switching = [SubRun("switch-tde-aes-256-ctr", "switching", "encrypt", ("tde:aes-256-ctr",), {}, {"trials": 3}, 75),
                 SubRun("switch-fs-fscrypt", "switching", "encrypt", ("fs:fscrypt",), {}, {"trials": 3}, 75)]
    cost = SubRun("cost", "cost", "sql", SPECS, {"dir": "/data/orders-sql"}, {"trials": blocks})
    root.mkdir(parents=True, exist_ok=True)
    _cost_run(root / "cost", blocks, headlines, effects)
    _switch_run(root / "switch-tde-aes-256-ctr", "tde:aes-256-ctr", online=True)
    _switch_run(root / "switch-fs-fscrypt", "fs:fscrypt", online=False)
    runs = {s.name: {"status": "completed", "seconds": 60.0} for s in [*switching, cost]}
    decision = {"schema": 1, "status": "completed", "request": {
        "engine": ENGINE, "workload_dir": "/data/orders-sql", "workload_name": "orders-sql",
        "mechanisms": list(SPECS[1:]), "against": against or [{"name": "stolen-disk", "row": "disk"}],
        "budget_s": 1200.0, "precision": None, "server_settings": {}},
        "plan": {"runs": [s.to_json() for s in [*switching, cost]], "budget_s": 1200.0, "lower_bound_s": 150.0,
                 "not_switched": {"fs:gocryptfs": "engine 'mariadb' cannot switch 'fs:gocryptfs' in place"}},
        "runs": runs}
    (root / "decision.json").write_text(json.dumps(decision))
    return root

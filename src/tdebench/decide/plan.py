"""What a decision runs: its sub-runs, and how its time budget is split between them.

* one **switching** run per mechanism the engine can switch on in place (``encrypt`` workload: the switch timed by
  doing it, online under a live background or offline with the service stopped), run first: their length is fixed
  by their phases;
* a **backups** run when ``--against`` names backups (``backup`` workload: every backup kind made and scanned);
* the **cost** run last: the user's workload (``sql`` with the workload directory) on the plain twin and every
  mechanism, given what is left of the budget as its ``--max-time`` (and ``--precision`` when asked).

The budget's lower bound is what the plan fixes before any work: every switching trial's steady phases and
ramp-ups. Loads, switches, scans and the cost run's blocks come on top of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from tdebench.api.engine import Config, Engine
from tdebench.encryption import EncryptionSpec
from tdebench.errors import UsageError

COST_WORKLOAD = "sql"
SWITCH_WORKLOAD = "encrypt"
BACKUP_WORKLOAD = "backup"
#: the encrypt workload's options unless ``--switch-option`` says otherwise: one switch on (the way back and
#: re-keying are other questions), one encryption thread (measured gentler and faster on 2 cores:
#: docs/workloads/encrypt.md), short steady phases
SWITCH_DEFAULTS: dict[str, Any] = {"threads": "1", "steady": "10s", "rekey": "no", "way_back": "false"}
SWITCH_TRIALS = 3  # below 3 trials an interval is shown as not resolved
BACKUP_SF = 0.01
#: the most blocks a cost run without --precision runs (its --max-time, the budget left, usually ends it first)
MAX_COST_TRIALS = 1000
#: kept free at the end of the budget for the page itself
REPORT_RESERVE_S = 5.0


@dataclass(frozen=True)
class SubRun:
    """One run of a decision: its directory name, role, workload, specs and options (as ``tdebench run`` takes)."""

    name: str
    role: str  # cost, switching, backups
    workload: str
    encryption: tuple[str, ...]
    options: dict[str, Any] = field(default_factory=dict)  # workload options
    run: dict[str, Any] = field(default_factory=dict)  # run options: trials, warmup, precision, memory_ratio, ...
    floor_s: float = 0.0  # the time its plan fixes before any work (a lower bound)

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "role": self.role, "workload": self.workload, "encryption": list(self.encryption),
                "options": self.options, "run": self.run, "floor_s": round(self.floor_s, 3)}

    def command(self, engine: str, settings: dict[str, str], out: str) -> str:
        """The ``tdebench run`` command that makes the same run alone (the cost run's --max-time aside)."""
        flags = {"trials": "--trials", "warmup": "--warmup", "precision": "--precision", "sf": "--sf",
                 "page_source": "--page-source", "data_dir": "--data-dir"}
        parts = ["tdebench run", f"--engine {engine}", f"--workload {self.workload}",
                 f"--encryption {','.join(self.encryption)}"]
        parts += [f"{flags[k]} {v}" for k, v in self.run.items() if k in flags]
        if self.run.get("memory_ratio"):
            parts.append("--memory-ratio " + ",".join(f"{r:g}" for r in self.run["memory_ratio"]))
        parts += [f"--workload-option {k}={v}" for k, v in self.options.items()]
        parts += [f"--server-setting {k}={v}" for k, v in settings.items()]
        return " ".join(parts + [f"--out {out}"])

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SubRun:
        return cls(str(data["name"]), str(data["role"]), str(data["workload"]), tuple(data.get("encryption") or ()),
                   dict(data.get("options") or {}), dict(data.get("run") or {}), float(data.get("floor_s") or 0.0))


@dataclass
class DecisionPlan:
    """The sub-runs in the order they run, what is not run and why (a mechanism no run can switch, keyed by its
    spec; ``backups`` when the engine has no backup tool), and the budget: its lower bound and the planned split."""

    runs: list[SubRun]
    not_switched: dict[str, str]
    budget_s: float

    @property
    def lower_bound_s(self) -> float:
        return sum(r.floor_s for r in self.runs)

    @property
    def switching_floor_s(self) -> float:
        return sum(r.floor_s for r in self.runs if r.role != "cost")

    def to_json(self) -> dict[str, Any]:
        return {"runs": [r.to_json() for r in self.runs], "not_switched": self.not_switched,
                "budget_s": self.budget_s, "lower_bound_s": round(self.lower_bound_s, 3)}


def switch_options(given: dict[str, str]) -> dict[str, Any]:
    """The encrypt workload's options: :data:`SWITCH_DEFAULTS` under ``--switch-option`` (checked by the workload:
    UsageError naming the key)."""
    from tdebench.workloads import check_workload_options

    options = {**SWITCH_DEFAULTS, **given}
    check_workload_options(SWITCH_WORKLOAD, options)
    return options


def switch_refusal(engine: Engine, spec: EncryptionSpec, options: dict[str, Any]) -> str | None:
    """Why the encrypt workload cannot switch ``engine`` to ``spec`` (its own one-line refusal); None: it can."""
    from tdebench.workloads import check_workload_options, unmet_need

    need = unmet_need(SWITCH_WORKLOAD, engine)
    if need is not None:
        return f"the {SWITCH_WORKLOAD} workload does not run on engine '{engine.name}': {need}"
    opts = check_workload_options(SWITCH_WORKLOAD, options)
    try:
        opts.check_configs([Config(engine.name, spec, {})])
    except UsageError as exc:
        return exc.one_line()
    return None


def switch_floor(options: dict[str, Any], trials: int) -> float:
    """Seconds a switching run's phases take at least: per trial, the background's ramp-up and a steady phase
    before and after every switch it makes (on; re-keying and the way back when asked)."""
    from tdebench.workloads import check_workload_options

    opts = check_workload_options(SWITCH_WORKLOAD, options)
    switches = 1 + (opts.rekey == "yes") + bool(opts.way_back)
    return trials * (opts.rampup + 2 * opts.steady * switches) * len(opts.threads) * len(opts.iops or [None])


def cost_run(specs: list[EncryptionSpec], options: dict[str, Any], *, precision: str | None, trials: int | None,
             ratios: tuple[float, ...], page_source: str | None) -> SubRun:
    """The user's workload on the plain twin and every mechanism."""
    run: dict[str, Any] = {"warmup": 1, "trials": trials if trials is not None else (None if precision else
                                                                                      MAX_COST_TRIALS)}
    if precision is not None:
        run["precision"] = precision
    if ratios:
        run["memory_ratio"] = list(ratios)
    if page_source:
        run["page_source"] = page_source
    return SubRun("cost", "cost", COST_WORKLOAD, ("none", *(str(s) for s in specs)), options,
                  {k: v for k, v in run.items() if v is not None})


def build(engine: Engine, specs: list[EncryptionSpec], cost: SubRun, *, switch: dict[str, Any], switch_trials: int,
          backups: bool, budget_s: float, data_dir: str | None = None) -> DecisionPlan:
    """The decision's sub-runs: switching (for every mechanism that can be switched), backups (when asked), cost;
    ``data_dir``: where every run's input data are cached."""
    runs: list[SubRun] = []
    refused: dict[str, str] = {}
    floor = switch_floor(switch, switch_trials)
    for spec in specs:
        reason = switch_refusal(engine, spec, switch)
        if reason is not None:
            refused[str(spec)] = reason
            continue
        runs.append(SubRun(f"switch-{spec.label}", "switching", SWITCH_WORKLOAD, (str(spec),), dict(switch),
                           {"trials": switch_trials, "warmup": 0}, floor))
    from tdebench.workloads import unmet_need

    no_backups = unmet_need(BACKUP_WORKLOAD, engine) if backups else None
    if no_backups is not None:  # the backup rows stay "not checked", with the reason
        refused["backups"] = f"the {BACKUP_WORKLOAD} workload does not run on engine '{engine.name}': {no_backups}"
    elif backups:
        runs.append(SubRun("backups", "backups", BACKUP_WORKLOAD, cost.encryption, {},
                           {"trials": 1, "warmup": 0, "sf": BACKUP_SF}))
    runs.append(cost)
    if data_dir:
        runs = [replace(r, run={**r.run, "data_dir": data_dir}) for r in runs]
    return DecisionPlan(runs, refused, budget_s)


def check_budget(plan: DecisionPlan) -> None:
    """UsageError, before any work, when the budget is below what the plan fixes (its lower bound)."""
    need = plan.lower_bound_s
    if plan.budget_s < need + REPORT_RESERVE_S:
        switching = [r for r in plan.runs if r.role == "switching"]
        parts = (f"{len(switching)} switching run(s) × {switching[0].run['trials']} trials × "
                 f"{duration(switching[0].floor_s / switching[0].run['trials'])} of fixed phases"
                 if switching else "the page")
        raise UsageError(f"--budget {duration(plan.budget_s)} is below the lower bound of this decision, "
                         f"{duration(need + REPORT_RESERVE_S)} ({parts}; the loads and the cost run's blocks "
                         "come on top)", f"give --budget {_suggest(need)} or more, or fewer --mechanisms")


def duration(seconds: float) -> str:
    """``80 s`` below 10 minutes (a lower bound is not rounded away), else ``12 min``, ``1 h 05 min``."""
    from tdebench.runner.progress import human_duration

    return f"{seconds:.0f} s" if seconds < 600 else human_duration(seconds)


def _suggest(need_s: float) -> str:
    """A budget that leaves the cost run at least as long as the fixed phases: ``12m``."""
    minutes = int(-(-(2 * need_s + 60) // 60))
    return f"{minutes}m"

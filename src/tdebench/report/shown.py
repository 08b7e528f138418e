"""The presentation of a run (tdebench.api.presentation), read from its directory alone.

The manifest's ``plan.presentation`` is what the workload declared when the run started. A run written before
the manifest carried it (schema versions 1 to 3), or a directory with measurements only, gets its workload's
declaration as the installed tdebench has it (``Workload.shown``), with the manifest's ``headline`` when there is
one; a workload this tdebench does not know is shown step by step under its name.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from tdebench.api.presentation import Headline, Presentation
from tdebench.errors import UsageError
from tdebench.results.rundir import LoadedRun
from tdebench.workloads import workload_class


def workload_name(files: LoadedRun) -> str:
    """The run's workload: the plan's, else the one most of its measurements name ("" when neither says)."""
    plan = files.manifest.get("plan") if isinstance(files.manifest.get("plan"), dict) else {}
    if plan.get("workload"):
        return str(plan["workload"])
    counts = Counter(row.key.workload for row in files.measurements.rows if row.key.workload)
    return counts.most_common(1)[0][0] if counts else ""


def _declared(name: str) -> Presentation | None:
    try:
        return workload_class(name).shown
    except (UsageError, ImportError, AttributeError):
        return None


def _manifest_headline(manifest: dict[str, Any]) -> Headline | None:
    head = manifest.get("headline")
    if not isinstance(head, dict) or not all(isinstance(head.get(k), str) for k in ("test", "step", "metric")):
        return None
    return Headline("headline", head["test"], head["step"], head["metric"],
                    title=f"{head['test']} {head['step']} {head['metric']}")


def run_presentation(files: LoadedRun) -> Presentation:
    """How the run in ``files`` is shown (see the module's docstring for the fallbacks)."""
    plan = files.manifest.get("plan") if isinstance(files.manifest.get("plan"), dict) else {}
    recorded = plan.get("presentation")
    if isinstance(recorded, dict):
        return Presentation.from_json(recorded)
    name = workload_name(files)
    shown = _declared(name) if name else None
    base = shown or Presentation(name or "run")
    headline = _manifest_headline(files.manifest)
    return base.with_headlines((headline,)) if headline is not None else base

"""Workloads present themselves: each declares how it is shown (tdebench.api.presentation), the manifest's plan
carries the declaration, and the terminal summary and the report read it from the run directory alone; a run
directory written before the manifest carried it falls back on the installed workload's declaration."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from rich.console import Console

from tdebench.api.presentation import Headline, Presentation, Section, StepGroup
from tdebench.cli.summary import build_summary
from tdebench.report import build_report, summarize
from tdebench.results.rundir import COLUMNS
from tdebench.workloads import workload_class, workload_names


@pytest.mark.parametrize("name", workload_names())
def test_every_workload_declares_a_presentation_that_survives_the_manifest(name: str) -> None:
    shown = workload_class(name).shown
    assert isinstance(shown, Presentation) and shown.title
    again = Presentation.from_json(json.loads(json.dumps(shown.to_json())))
    assert again == shown
    assert shown.layout != "steps" or shown.step_groups, "a steps layout needs its step groups"


def test_unknown_keys_layouts_and_sections_of_a_newer_tdebench_are_read_sensibly() -> None:
    data = {"title": "x", "layout": "radar", "sections": [{"kind": "hologram", "title": "?"},
                                                          {"kind": "conditions", "title": "C", "texts": {"1": "a"}}],
            "colour": "blue", "headlines": [{"name": "h", "test": "t", "step": "total", "metric": "elapsed",
                                             "title": "T"}]}
    shown = Presentation.from_json(data)
    assert shown.layout == "steps" and [s.kind for s in shown.sections] == ["conditions"]
    assert shown.headlines[0].series == ("t", "total", "elapsed")
    with pytest.raises(ValueError, match="layout"):
        Presentation("x", layout="radar")  # type: ignore[arg-type]


# a run of a workload this tdebench does not know: only its manifest says how it is shown ----------------------
MINE = Presentation(
    title="Orders application",
    headlines=(Headline("reads", "orders", "total", "elapsed", "weighted total of the reads"),),
    layout="steps",
    metrics={"elapsed": "time per call"},
    step_groups=(StepGroup("orders", "The orders application, per call", ("elapsed",)),),
    sections=(Section("conditions", "Ledger checks", test="orders", step="checks",
                      note="Checked after every trial: the ledger balances.",
                      texts={"1": "sum(debits) = sum(credits)"}),),
)


def write_run(run: Path, presentation: dict | None, workload: str = "orders", test: str = "orders",
              checks: str = "checks") -> None:
    run.mkdir(parents=True)
    rows = []
    for block in range(0, 4):
        for config, enc, factor in (("m-none", "none", 1.0), ("m-tde", "tde:aes-256-ctr", 1.1)):
            base = {"run_id": "r", "block": block, "trial": block, "config": config, "engine": "mariadb",
                    "encryption": enc, "workload": workload, "test": test, "stream": "", "started_at": "",
                    "status": "warmup" if block == 0 else "ok", "round": ""}
            calls = {"get_order": 0.2, "place_order": 0.5}
            for step, seconds in calls.items():
                rows.append({**base, "step": step, "metric": "elapsed", "value": seconds * factor + block / 100,
                             "unit": "s"})
            rows.append({**base, "step": "total", "metric": "elapsed",
                         "value": sum(calls.values()) * factor + block / 50, "unit": "s"})
            rows.append({**base, "step": checks, "metric": "condition_1_violations", "value": 0,
                         "unit": "count"})
    with open(run / "measurements.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    plan = {"workload": workload, "trials": 3, **({"presentation": presentation} if presentation else {})}
    manifest = {"schema_version": 4 if presentation else 3, "run_id": "r", "status": "completed", "plan": plan,
                "configs": [{"label": "m-none", "engine": "mariadb", "encryption": "none"},
                            {"label": "m-tde", "engine": "mariadb", "encryption": "tde:aes-256-ctr"}]}
    (run / "manifest.json").write_text(json.dumps(manifest))


def terminal(run: Path) -> str:
    console = Console(record=True, width=200, color_system=None)
    console.print(build_summary(run))
    return console.export_text()


def test_the_report_is_rebuilt_from_the_manifest_alone(tmp_path: Path) -> None:
    run = tmp_path / "run"
    write_run(run, MINE.to_json())
    rs = summarize(run)
    assert rs.presentation == MINE
    assert rs.engines[0].headline.step == "total"  # the declared headline, not a guess
    md = build_report(run).with_name("summary.md").read_text()
    assert "## mariadb: The orders application, per call, time per call" in md
    assert "## Ledger checks" in md and "sum(debits) = sum(credits)" in md
    assert "Checked after every trial: the ledger balances." in md
    text = terminal(run)
    assert "orders: median seconds per step" in text and "place_order" in text


def test_an_older_run_directory_gets_its_workloads_declaration(tmp_path: Path) -> None:
    run = tmp_path / "old"
    write_run(run, None, workload="tpcc", test="tpcc", checks="consistency")  # schema 3: no plan.presentation
    rs = summarize(run)
    assert rs.presentation == workload_class("tpcc").shown
    md = build_report(run).with_name("summary.md").read_text()
    assert "TPC-C-like OLTP per virtual-user step" not in md  # no vuN steps: no such table
    assert "## TPC-C consistency" in md and "W_YTD = sum(D_YTD)" in md  # the section of its declaration


def test_an_unknown_workload_without_a_declaration_is_shown_by_its_steps(tmp_path: Path) -> None:
    run = tmp_path / "unknown"
    write_run(run, None)
    rs = summarize(run)
    assert rs.presentation.title == "orders" and not rs.presentation.sections
    assert rs.engines[0].headline.step == "total"
    text = terminal(run)
    assert "m-tde" in text and "orders" in text


@pytest.mark.parametrize("workload, options, title", [
    ("tpch", {}, "total of its query times"),  # the declaration's title for its own headline
    ("sysbench", {"tests": "oltp_read_only,oltp_insert"}, None),
])
def test_a_runs_presentation_has_its_own_headlines_and_groups(tmp_path: Path, workload: str, options: dict,
                                                              title: str | None) -> None:
    from types import SimpleNamespace

    from tdebench.api.engine import Config
    from tdebench.api.plan import RunPlan
    from tdebench.encryption import parse_spec
    from tdebench.workloads import make_workload

    plan = RunPlan(configs=[Config("mariadb", parse_spec("none"))], workload=workload, workload_options=options)
    made = make_workload(plan, SimpleNamespace(path=tmp_path))
    shown = made.presentation()
    assert shown.headlines and shown.headlines[0].series == made.headline()
    if title:
        assert shown.headlines[0].title == title
    if workload == "sysbench":
        assert [g.test for g in shown.step_groups] == ["oltp_read_only", "oltp_insert"]

"""A label the evidence does not confirm is marked in every view of a run.

The fixture run directory is copied and its encrypted config's verification entry is given the status the
orchestrator records for an overridden (or unverifiable) external target; every view is then read back.
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from rich.console import Console

from tdebench.cli.summary import build_summary, label_warnings, print_summary
from tdebench.encryption import parse_spec
from tdebench.engines.toolkit.dbapi import status as external_status
from tdebench.api.engine import Config
from tdebench.engines.toolkit.dbapi.status import Finding, evaluate
from tdebench.errors import RunFailed
from tdebench.report import build_report, summarize
from tdebench.report.figures import engine_charts
from tdebench.results import labels
from tdebench.results.labels import LabelStatus, label_status
from tdebench.api.events import RunListener
from tdebench.verify.threats import ThreatModel
from tdebench.runner.orchestrator import Orchestrator

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "rundir_sqlite"
ENC = "sqlite-sqlcipher-aes-256-cbc"
NOTE = ("kept by --override-encryption-check although the server's status is contradicted: declared "
        "tde:aes-256-cbc, but the server reports no encryption")


def marked_run(tmp_path: Path, status: str, note: str) -> Path:
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run, ignore=shutil.ignore_patterns("report", "*.py", "__pycache__"))
    path = run / "verification.json"
    data = json.loads(path.read_text())
    data["configs"][ENC].update(label_status=status, label_note=note)
    path.write_text(json.dumps(data))
    return run


def console_text(run: Path) -> str:
    console = Console(record=True, width=250, color_system=None)
    print_summary(run, console)
    return console.export_text()


def test_overridden_label_is_marked_in_every_view(tmp_path: Path) -> None:
    run = marked_run(tmp_path, "overridden", NOTE)
    text = console_text(run)
    assert f"WARNING: config '{ENC}' is labelled sqlcipher:aes-256-cbc, but the label is OVERRIDDEN, NOT CONFIRMED" \
        in text and NOTE in text
    assert f"{ENC} (sqlcipher:aes-256-cbc, overridden, not confirmed)" in text  # the summary tables' rows
    build_report(run)
    report = run / "report"
    md = (report / "summary.md").read_text()
    assert "sqlcipher:aes-256-cbc (overridden, not confirmed): " in md  # verdict sentence
    assert "| sqlcipher:aes-256-cbc (overridden, not confirmed) |" in md  # summary table
    assert "OVERRIDDEN, NOT CONFIRMED" in md.split("## Warnings")[1].split("##")[0]
    html = (report / "index.html").read_text()
    assert html.count("overridden, not confirmed") >= 4  # verdict, summary, verification, methods
    with open(report / "overhead.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert rows and {(r["label_status"], r["plain_label_status"]) for r in rows} == {("overridden", "confirmed")}
    with open(report / "summary.csv", newline="") as handle:
        by_config = {r["config"]: r["label_status"] for r in csv.DictReader(handle)}
    assert by_config == {"sqlite-none": "confirmed", ENC: "overridden"}


def test_chart_legends_carry_the_label_status(tmp_path: Path) -> None:
    rs = summarize(marked_run(tmp_path, "overridden", NOTE))
    svgs = [c.svg for es in rs.engines for c in engine_charts(rs, es)]
    assert svgs and all(f"{ENC} (overridden, not confirmed)" in svg for svg in svgs)


def test_unverifiable_key_length_is_never_shown_as_confirmed(tmp_path: Path) -> None:
    run = marked_run(tmp_path, "unverifiable", "key length not reported by the server: as declared, not verified")
    assert "UNVERIFIABLE: key length not reported" in label_warnings(run)[0]
    assert "(sqlcipher:aes-256-cbc, unverifiable: key length)" in console_text(run)
    build_report(run)
    assert "sqlcipher:aes-256-cbc (unverifiable: key length)" in (run / "report" / "summary.md").read_text()
    with open(run / "report" / "overhead.csv", newline="") as handle:
        assert {r["label_status"] for r in csv.DictReader(handle)} == {"unverifiable"}


def test_confirmed_runs_are_unmarked(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run, ignore=shutil.ignore_patterns("report"))
    assert label_warnings(run) == [] and "not confirmed" not in console_text(run)
    build_report(run)
    assert "overridden" not in (run / "report" / "summary.md").read_text()


# what the engine records and how it is read back -------------------------------------------------------------

def test_key_length_the_server_does_not_report_is_unverifiable() -> None:
    verdict = evaluate(parse_spec("tde:aes-256-ctr"), Finding("MariaDB 10.11", state="yes", mode="ctr"))
    assert verdict.state == "confirmed" and verdict.unverified == ["key length"]
    status, note = external_status.label_status(verdict, override=False)
    assert status == "unverifiable" and note.startswith("key length not reported")
    reported = evaluate(parse_spec("tde:aes-256"), Finding("SQL Server", state="yes", key_bits=256, cipher="AES"))
    assert external_status.label_status(reported, override=False) == ("confirmed", "")


def test_an_override_of_a_contradiction_is_recorded_as_overridden() -> None:
    verdict = evaluate(parse_spec("tde:aes-256-ctr"), Finding("MariaDB 10.11", state="no"))
    status, note = external_status.label_status(verdict, override=True)
    assert status == "overridden" and "contradicted" in note and "reports no encryption" in note


def test_engine_and_results_use_the_same_words() -> None:
    assert (external_status.LABEL_CONFIRMED, external_status.LABEL_OVERRIDDEN, external_status.LABEL_UNVERIFIABLE,
            external_status.LABEL_REFUSED) == (labels.CONFIRMED, labels.OVERRIDDEN, labels.UNVERIFIABLE,
                                               labels.NOT_CONFIRMED)


@pytest.mark.parametrize("entry,plain,expected", [
    ({"encrypted_on_disk": True, "passed": True}, False, "confirmed"),
    ({"encrypted_on_disk": False}, True, "confirmed"),
    ({"encrypted_on_disk": False, "passed": True}, False, "not confirmed"),
    ({"passed": False, "error": "x"}, False, "not confirmed"),
    ({"status": {"label_status": "overridden"}}, False, "overridden"),
    ({"answers_equal": True}, False, "not checked"),
    (None, False, "not checked"),
])
def test_label_status_derived_from_verification(entry: dict[str, Any] | None, plain: bool, expected: str) -> None:
    assert label_status(entry, plain).status == expected


def test_decoration() -> None:
    assert LabelStatus("overridden").decorate("tde:aes-256-cbc") == "tde:aes-256-cbc (overridden, not confirmed)"
    assert LabelStatus("confirmed").decorate("x") == "x" and LabelStatus("not checked").decorate("x") == "x"


# the orchestrator at verification time ------------------------------------------------------------------------

class Recording(RunListener):
    def __init__(self) -> None:
        self.lines: list[str] = []

    def message(self, text: str) -> None:
        self.lines.append(text)


class ServerWeCannotScan:
    """An external-like instance: no files to scan, its own status only."""

    scannable = False
    scan_note = "on-disk verification not possible for external targets"

    def __init__(self, status: dict[str, Any], failure: Exception | None = None) -> None:
        self.config = Config("external", parse_spec("tde:aes-256-ctr"), {}, name="t")
        self.status, self.failure = status, failure

    def encryption_status(self) -> dict[str, Any]:
        return self.status

    def check_encrypted(self, tables: list[str]) -> None:
        if self.failure is not None:
            raise self.failure

    def threats(self) -> None:
        """No threat-model probes: the rows say "not checked"."""
        return None


def orchestrator() -> Orchestrator:
    orch = object.__new__(Orchestrator)  # only what _verify_instance uses
    orch.ui = Recording()
    orch.verification = {"schema_version": 1, "configs": {}}
    orch.workload = SimpleNamespace(table_names=lambda: ["region"], known_plaintext=[], verify_after_load=True)
    orch.rundir = SimpleNamespace(write_verification=lambda data: None)
    orch.threats = ThreatModel()
    return orch


def test_verification_of_a_target_records_and_warns_and_says_what_it_does() -> None:
    orch = orchestrator()
    orch._verify_instance("t", ServerWeCannotScan({"label_status": "overridden", "label_note": NOTE}))
    entry = orch.verification["configs"]["t"]
    assert (entry["label_status"], entry["label_note"]) == ("overridden", NOTE)
    assert not any("verifying encryption at rest" in line for line in orch.ui.lines)
    assert any(line.startswith("checking the encryption status") for line in orch.ui.lines)
    assert any(line.startswith("WARNING:") and "OVERRIDDEN, NOT CONFIRMED" in line for line in orch.ui.lines)


def test_a_refused_target_says_its_fix_once() -> None:
    orch = orchestrator()
    failure = RunFailed("target 't' is declared tde:aes-256-ctr, but MariaDB does not confirm it",
                        "as an administrator run GRANT PROCESS ON *.* TO 'bench'@'%'")
    with pytest.raises(RunFailed) as err:
        orch._verify_instance("t", ServerWeCannotScan({}, failure))
    line = err.value.one_line()
    assert line.count("fix:") == 1 and "GRANT PROCESS ON *.* TO 'bench'@'%'" in line


def test_summary_uses_recorded_status_from_the_manifest(tmp_path: Path) -> None:
    run = tmp_path / "run"
    shutil.copytree(FIXTURE, run, ignore=shutil.ignore_patterns("report"))
    manifest = json.loads((run / "manifest.json").read_text())
    for c in manifest["configs"]:
        if c["label"] == ENC:
            c.update(label_status="overridden", label_note=NOTE)
    (run / "manifest.json").write_text(json.dumps(manifest))
    console = Console(record=True, width=250, color_system=None)
    console.print(build_summary(run))
    assert "overridden, not confirmed" in console.export_text()

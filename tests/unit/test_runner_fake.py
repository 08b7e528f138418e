"""Runner behaviour in-process on the fake engine and the probe workload (tests/fakes): exit codes, manifest,
block order, faults, abandoning, answers, interruption bookkeeping and resume. The same behaviour on real
servers and real signals is covered by tests/e2e (test_faults, test_interrupt, test_runner)."""

from __future__ import annotations

import csv
import json
import sys
from pathlib import Path

import pytest

from tdebench.cli.app import main
from tests.fakes import engine as fake_engine
from tests.fakes import workload as probe

PLAIN, ENC = "fake-none", "fake-tde-aes-256-ctr"


@pytest.fixture(autouse=True)
def _fake(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    with fake_engine.registered(), probe.registered():
        yield


def tdebench(capfd, *args: str) -> tuple[int, str]:
    """``tdebench ARGS`` in this process: (exit code, stderr)."""
    capfd.readouterr()
    with pytest.raises(SystemExit) as info:
        main(list(args))
    return int(info.value.code or 0), capfd.readouterr().err


def run(capfd, tmp_path, *args: str, name: str = "run") -> tuple[int, str, Path]:
    out = tmp_path / name
    code, err = tdebench(capfd, "run", "--engine", "fake", "--workload", "probe", "--out", str(out),
                         "--work-dir", str(tmp_path / "work"), "--data-dir", str(tmp_path / "data"),
                         "--seed", "7", "--no-report", *args)
    return code, err, out


def rows(out: Path) -> list[dict[str, str]]:
    with open(out / "measurements.csv", newline="") as handle:
        return list(csv.DictReader(handle))


def manifest(out: Path) -> dict:
    return json.loads((out / "manifest.json").read_text())


def trials(out: Path) -> list[tuple[int, str, str]]:
    """(block, config, status) of every trial marker, in file order."""
    return [(int(r["block"]), r["config"], r["status"]) for r in rows(out) if r["test"] == "trial"]


def test_a_clean_run_exits_0_with_a_complete_manifest(capfd, tmp_path):
    code, err, out = run(capfd, tmp_path, "--trials", "2")
    assert code == 0, err
    m = manifest(out)
    assert m["status"] == "completed" and not m["problems"] and not m["failed_steps"]
    assert [c["label"] for c in m["configs"]] == [PLAIN, ENC]
    assert m["plan"]["workload"] == "probe" and m["plan"]["trials"] == 2 and m["plan"]["seed"] == 7
    assert m["plan"]["presentation"]["title"] == "One aggregate query"  # how it is shown (the example's)
    assert {c["engine_version"] for c in m["configs"]} == {fake_engine.FakeEngine().version()}
    assert all(c["dialect"]["family"] == "sqlite" and c["storage_bytes"] > 0 for c in m["configs"])
    assert "in_flight" not in m and m["host"] and m["data"]["rows"] == 1000
    # the block order is the plan's: warm-up block 0, then one block per trial, every config once per block
    order = [(b, c) for b, c, _ in trials(out)]
    assert order == [(b["block"], label) for b in m["plan"]["blocks"] for label in b["order"]]
    assert {s for _, _, s in trials(out)} == {"warmup", "ok"}
    verification = json.loads((out / "verification.json").read_text())["configs"]
    assert verification[PLAIN]["marker_hits"] > 0 and verification[PLAIN]["known_plaintext_hits"] > 0
    assert verification[ENC]["encrypted_on_disk"] and verification[ENC]["marker_hits"] == 0
    assert verification[ENC]["answers_equal"] is True


def test_a_failed_trial_is_recorded_the_run_goes_on_and_exits_1(capfd, tmp_path):
    code, err, out = run(capfd, tmp_path, "--trials", "3", "--workload-option", f"fail={ENC}@2")
    assert code == 1 and f"FAILED: {ENC} block 2" in err, err
    assert (2, ENC, "failed") in trials(out) and (3, ENC, "ok") in trials(out)
    m = manifest(out)
    assert m["status"] == "completed with failures" and not m.get("abandoned")
    assert [(f["config"], f["block"]) for f in m["failures"]] == [(ENC, 2)]
    assert "injected failure" in m["failures"][0]["reason"]


def test_a_crashed_server_fails_one_trial_is_restarted_and_recovered(capfd, tmp_path):
    code, err, out = run(capfd, tmp_path, "--trials", "2", "--warmup", "0", "--workload-option", f"crash={ENC}@1")
    assert code == 1, err
    assert (1, ENC, "failed") in trials(out) and (2, ENC, "ok") in trials(out)
    assert "not running" in manifest(out)["failures"][0]["reason"]


def test_a_config_is_abandoned_after_max_failures_in_a_row(capfd, tmp_path):
    code, err, out = run(capfd, tmp_path, "--trials", "4", "--warmup", "0", "--max-failures", "2",
                         "--workload-option", f"fail={ENC}@1,2,3,4")
    assert code == 1 and f"ABANDONED: {ENC} abandoned after 2 consecutive failed trials" in err, err
    assert [s for b, c, s in trials(out) if c == ENC] == ["failed", "failed"]
    assert [s for b, c, s in trials(out) if c == PLAIN] == ["ok"] * 4
    assert manifest(out)["abandoned"] == [f"{ENC} abandoned after 2 consecutive failed trials"]


def test_differing_answers_are_a_problem(capfd, tmp_path):
    code, err, out = run(capfd, tmp_path, "--trials", "1", "--warmup", "0", "--workload-option", f"differ={ENC}")
    assert code == 1 and f"PROBLEM: answers of {ENC}" in err, err
    assert json.loads((out / "verification.json").read_text())["configs"][ENC]["answers_equal"] is False


def test_an_interrupted_run_records_its_state_and_resumes_without_repeating_trials(capfd, tmp_path):
    code, err, out = run(capfd, tmp_path, "--trials", "3", "--workload-option", f"interrupt={ENC}@2")
    assert code == 130 and "--resume" in err, err
    m = manifest(out)
    assert m["status"] == "interrupted" and m["in_flight"]["config"] == ENC and m["in_flight"]["block"] == 2
    before = trials(out)
    assert not [r for r in rows(out) if (r["block"], r["config"]) == ("2", ENC)]  # the trial in flight: no rows
    assert not list((tmp_path / "work").glob("tdebench-*")), "the interrupted run left its work directory"
    loads = len([r for r in rows(out) if r["test"] == "load"])
    # the resumed run must not be interrupted again: same plan, the option comes from the manifest's plan
    m["plan"]["workload_options"]["interrupt"] = ""
    (out / "manifest.json").write_text(json.dumps(m))
    code, err = tdebench(capfd, "run", "--resume", str(out), "--work-dir", str(tmp_path / "work"), "--no-report")
    assert code == 0, err
    after = trials(out)
    done = [(b, c) for b, c, s in after if s in ("ok", "warmup")]
    assert len(done) == len(set(done)) == 2 * 4  # warm-up + 3 trials per config, none twice
    assert [t for t in after if t in before] == before  # what was done before is kept as it was
    m = manifest(out)
    assert m["status"] == "completed" and m["resumed"]
    # the first load's rows are superseded by the reload's
    assert len([r for r in rows(out) if r["test"] == "load" and r["status"] == "superseded"]) == loads


def test_bad_input_to_the_fake_is_refused_before_any_work(capfd, tmp_path):
    code, err, out = run(capfd, tmp_path, "--encryption", "sqlcipher:aes-256-cbc")
    assert code == 2 and "does not support encryption" in err and not out.exists(), err
    code, err, out = run(capfd, tmp_path, "--workload-option", "rows=0")
    assert code == 2 and "bad value" in err and not out.exists(), err


def test_a_precision_run_stops_once_nothing_is_left_to_compare(capfd, tmp_path):
    """Its encrypted twin abandoned, a --precision run has no pair left: it stops, not at --max-time."""
    fails = ",".join(str(b) for b in range(1, 60))
    code, err, out = run(capfd, tmp_path, "--precision", "1%", "--max-time", "10m", "--warmup", "0",
                         "--max-failures", "2", "--workload-option", f"fail={ENC}@{fails}")
    assert code == 1 and "no config left to measure" in err, err
    assert [s for b, c, s in trials(out) if c == ENC] == ["failed", "failed"]
    assert manifest(out)["blocks_run"] <= 3


def test_the_first_line_says_how_a_precision_run_ends(capfd, tmp_path):
    """Not "10 trials": a --precision run measures blocks until its target, within its limits."""
    out = tmp_path / "run"
    capfd.readouterr()
    with pytest.raises(SystemExit):
        main(["run", "--engine", "fake", "--workload", "probe", "--out", str(out), "--work-dir", str(tmp_path / "w"),
              "--data-dir", str(tmp_path / "d"), "--no-report", "--precision", "50%", "--max-time", "90s",
              "--max-trials", "10", "--warmup", "0"])
    captured = capfd.readouterr()
    said = " ".join(captured.out.split())  # the console wraps the line at its width
    assert "· blocks until ±50% (at most 10 blocks or 1.5 min) (+0 warm-up)" in said and " trials " not in said, captured

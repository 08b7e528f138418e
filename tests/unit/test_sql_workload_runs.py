"""`--workload sql` runs in-process on the fake engine (tests/fakes): weights, undo checks, snapshot restore,
kept answers, resume after an interruption, answers that differ between twins."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from tdebench.cli.app import main
from tdebench.workloads.sql.workload import SqlWorkload
from tests.fakes import engine as fake_engine
from tests.sqlworkload import make_workload_dir

ENC = "fake-tde-aes-256-ctr"


@pytest.fixture(autouse=True)
def _fake(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    with fake_engine.registered():
        yield


def run(capfd, tmp_path, shop: Path, *args: str) -> tuple[int, str, Path]:
    out = tmp_path / "run"
    capfd.readouterr()
    with pytest.raises(SystemExit) as info:
        main(["run", "--engine", "fake", "--workload", "sql", "--workload-dir", str(shop), "--out", str(out),
              "--work-dir", str(tmp_path / "work"), "--data-dir", str(tmp_path / "data"), "--no-report",
              "--seed", "5", "--duration", "50ms", "--slice", "50ms", *args])
    return int(info.value.code or 0), capfd.readouterr().err, out


def rows(out: Path) -> list[dict[str, str]]:
    with open(out / "measurements.csv", newline="") as handle:
        return list(csv.DictReader(handle))


def test_total_is_the_weighted_sum_and_answers_are_kept(capfd, tmp_path):
    shop = make_workload_dir(tmp_path / "shop", toml="[weights]\nby_city = 3\nadd_order = 0.5\n")
    code, err, out = run(capfd, tmp_path, shop, "--trials", "2", "--warmup", "0", "--keep-answers")
    assert code == 0, err
    for block in ("1", "2"):
        mine = {r["step"]: float(r["value"]) for r in rows(out)
                if r["test"] == "sql" and r["config"] == ENC and r["block"] == block and r["metric"] == "elapsed"}
        assert set(mine) == {"by_city", "notes", "add_order", "reads", "writes", "total"}
        assert mine["reads"] == pytest.approx(3 * mine["by_city"] + mine["notes"])
        assert mine["writes"] == pytest.approx(0.5 * mine["add_order"])
        assert mine["total"] == pytest.approx(mine["reads"] + mine["writes"])
    answer = (out / "answers" / ENC / "by_city.csv").read_text().splitlines()
    assert answer[0] == "city,orders,total"  # then the rows (SQLite: NUMERIC affinity makes 5.00 an integer)
    assert sorted(answer[1:]) == ["Marylebone Gardens,2,110.49", "Walworth Village,1,5"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert [s["weight"] for s in manifest["data"]["steps"]] == [3.0, 1.0, 0.5]
    assert manifest["plan"]["workload_options"]["dir"] == str(shop.resolve())


def test_an_undo_that_does_not_put_the_data_back_fails_before_the_trials(capfd, tmp_path):
    shop = make_workload_dir(tmp_path / "shop")
    (shop / "writes" / "add_order.undo.sql").write_text("DELETE FROM orders WHERE id = 99;\n")
    code, err, out = run(capfd, tmp_path, shop, "--trials", "1", "--warmup", "0")
    assert code == 1 and "orders holds 4 rows, not the 3 it was loaded with" in err, err


def test_validation_runs_every_write_on_its_own_as_the_trials_do(capfd, tmp_path):
    """A write that needs the rows of another (run before it) fails in every trial, where each write runs alone and
    its undo right after: validation says so, before the trials."""
    shop = make_workload_dir(tmp_path / "shop")
    (shop / "writes" / "repeat_order.sql").write_text(  # the city is NULL, refused, without add_order's order 100
        "INSERT INTO customers (id, name, city) SELECT 50, 'Repeat', (SELECT CAST(placed AS TEXT) FROM orders "
        "WHERE id = 100);\n")
    (shop / "writes" / "repeat_order.undo.sql").write_text("DELETE FROM customers WHERE id = 50;\n")
    code, err, out = run(capfd, tmp_path, shop, "--trials", "1", "--warmup", "0")
    assert code == 1 and f"{ENC} validation repeat_order (each write runs on its own" in err, err
    shutil.rmtree(out)
    code, err, out = run(capfd, tmp_path, shop, "--trials", "1", "--warmup", "0", "--schedule", "block")
    assert code == 0, err  # whole trials run the writes in order, then the undos: as the validation does


def test_snapshot_restore_puts_the_data_back_without_undo(capfd, tmp_path):
    shop = make_workload_dir(tmp_path / "shop", toml='[writes]\nrestore = "snapshot"\n')
    (shop / "writes" / "add_order.undo.sql").unlink()
    code, err, out = run(capfd, tmp_path, shop, "--trials", "3", "--reset", "snapshot")
    assert code == 0, err  # the same INSERT every trial: a primary-key violation unless the data were restored
    assert [r["status"] for r in rows(out) if r["test"] == "trial"] == ["warmup"] * 2 + ["ok"] * 6


def test_answers_that_differ_between_twins_fail_the_run(capfd, tmp_path, monkeypatch):
    shop = make_workload_dir(tmp_path / "shop")
    original = SqlWorkload.validate

    def wrong_on_the_encrypted_twin(self, state, rec, ui):
        problems = original(self, state, rec, ui)
        if state.label == ENC:
            self.answer_sets[ENC]["notes"] = [["1", "not what the data say"]]
        return problems

    monkeypatch.setattr(SqlWorkload, "validate", wrong_on_the_encrypted_twin)
    code, err, out = run(capfd, tmp_path, shop, "--trials", "1", "--warmup", "0")
    assert code == 1 and f"PROBLEM: answers of {ENC} differ: notes: expected 2 rows, got 1" in err, err


def test_an_interrupted_run_resumes(capfd, tmp_path, monkeypatch):
    shop = make_workload_dir(tmp_path / "shop")
    original = SqlWorkload.trial

    def ctrl_c_in_block_2(self, state, block, rec):
        if block == 2 and state.label == ENC:
            raise KeyboardInterrupt
        return original(self, state, block, rec)

    monkeypatch.setattr(SqlWorkload, "trial", ctrl_c_in_block_2)
    code, err, out = run(capfd, tmp_path, shop, "--trials", "3", "--warmup", "0", "--schedule", "block")
    assert code == 130 and f"--resume {out}" in err, err
    monkeypatch.setattr(SqlWorkload, "trial", original)
    capfd.readouterr()
    with pytest.raises(SystemExit) as info:
        main(["run", "--resume", str(out), "--work-dir", str(tmp_path / "work"), "--no-report"])
    assert info.value.code == 0, capfd.readouterr().err
    done = [(r["block"], r["config"]) for r in rows(out) if r["test"] == "trial" and r["status"] == "ok"]
    assert sorted(done) == sorted((str(b), c) for b in (1, 2, 3) for c in ("fake-none", ENC))


def test_an_interrupt_in_the_middle_of_a_block_lets_every_running_trial_go(capfd, tmp_path, monkeypatch):
    """Each twin's trial gives back what it holds on its server (a connection, a sysbench account) before the
    teardown stops the servers; left to the garbage collector, it would reach for a stopped server."""
    from tdebench.workloads.sql.stepped import SqlSteps

    shop = make_workload_dir(tmp_path / "shop")
    original_step, original_abort = SqlSteps.run_step, SqlSteps.abort
    released: list[str] = []

    def ctrl_c_at_the_second_step(self, step, repetition):
        if self.state.label == ENC and step != self.steps[0]:
            raise KeyboardInterrupt
        return original_step(self, step, repetition)

    def abort(self):
        released.append(self.state.label)
        return original_abort(self)

    monkeypatch.setattr(SqlSteps, "run_step", ctrl_c_at_the_second_step)
    monkeypatch.setattr(SqlSteps, "abort", abort)
    code, err, out = run(capfd, tmp_path, shop, "--trials", "2", "--warmup", "0")
    assert code == 130, err
    assert sorted(set(released)) == sorted(["fake-none", ENC]), released

"""tdebench decide's pieces without servers: attacker names, mechanism families, the budget's lower bound, the
ranking rule, and the model built from a synthetic decision directory (tests/decisiondir.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tdebench.decide import attackers, load_decision, mechanisms
from tdebench.decide import plan as dplan
from tdebench.decide.protection import LEAKS, STOPS, UNKNOWN, Protection
from tdebench.decide.ranking import Candidate, better, cheaper, rank
from tdebench.encryption import parse_spec
from tdebench.engines import get_engine
from tdebench.errors import UsageError
from tdebench.stats.overhead import Overhead
from tdebench.verify.threat_rows import ORDER
from tests.decisiondir import EFFECTS, make_decision


def _o(pct: float, low: float | None, high: float | None, metric: str = "elapsed", unit: str = "s") -> Overhead:
    return Overhead("e", "c", "sql", "total", 6, 1.0, 1.0 + pct / 100, pct, low, high, 0.01, test="sql",
                    metric=metric, unit=unit)


# attackers ------------------------------------------------------------------------------------------------------
def test_attacker_names_map_to_threat_rows() -> None:
    chosen = attackers.parse_attackers("stolen-disk, backups,host-root,stolen-disk")
    assert [(a.name, a.row) for a in chosen] == [("stolen-disk", "disk"), ("backups", "backups"),
                                                 ("host-root", "live_host")]
    assert chosen[1].selects("backups:mariadb_dump") and not chosen[0].selects("data_dir")
    assert [a.row for a in attackers.parse_attackers(None)] == ["disk"]


def test_every_threat_row_has_a_name() -> None:
    assert set(ORDER) <= set(attackers.known_names().values())


def test_unknown_attacker_lists_the_known_ones() -> None:
    with pytest.raises(UsageError) as info:
        attackers.parse_attackers("stolen-disk,thief")
    assert "unknown attacker 'thief'" in info.value.problem
    assert "stolen-disk" in info.value.fix and "host-root" in info.value.fix


# mechanisms -----------------------------------------------------------------------------------------------------
def test_one_spec_per_family_of_the_engine() -> None:
    chosen = [str(s) for s in mechanisms.choose(get_engine("mariadb"), None)]
    assert chosen[0] == str(get_engine("mariadb").default_encrypted_spec())
    assert "fs:fscrypt" in chosen and "fs:gocryptfs" in chosen
    assert len({mechanisms.family(parse_spec(s)) for s in chosen}) == len(chosen)


def test_mechanisms_by_family_name_or_spec() -> None:
    engine = get_engine("mariadb")
    assert [str(s) for s in mechanisms.choose(engine, "tde,fscrypt")] == [
        str(engine.default_encrypted_spec()), "fs:fscrypt"]
    assert [str(s) for s in mechanisms.choose(engine, "tde:aes-128-cbc,fs:gocryptfs")] == [
        "tde:aes-128-cbc", "fs:gocryptfs"]


@pytest.mark.parametrize("engine, text, words", [
    ("mysql", None, ["one way to encrypt", "nothing to decide"]),
    ("mariadb", "tde", ["names 1 mechanism"]),
    ("sqlite", "tde,fscrypt", ["has no mechanism 'tde'"]),
])
def test_mechanisms_refused(engine: str, text: str | None, words: list[str]) -> None:
    with pytest.raises(UsageError) as info:
        mechanisms.choose(get_engine(engine), text)
    assert all(w in info.value.problem for w in words), info.value.one_line()


# the plan and its budget ----------------------------------------------------------------------------------------
def test_switch_floor_counts_every_steady_phase_and_ramp_up() -> None:
    options = dplan.switch_options({"steady": "10s", "rampup": "5s"})
    assert dplan.switch_floor(options, 3) == 3 * (5 + 2 * 10)
    assert dplan.switch_floor({**options, "way_back": "true"}, 1) == 5 + 4 * 10


def test_budget_below_the_lower_bound_is_refused_with_the_bound() -> None:
    runs = [dplan.SubRun("switch-a", "switching", "encrypt", ("tde:aes-256-ctr",), {}, {"trials": 3}, 75.0),
            dplan.SubRun("cost", "cost", "sql", ("none",))]
    with pytest.raises(UsageError) as info:
        dplan.check_budget(dplan.DecisionPlan(runs, {}, budget_s=60))
    assert "below the lower bound of this decision, 80 s" in info.value.problem
    assert "3 trials × 25 s of fixed phases" in info.value.problem and "--budget" in info.value.fix
    dplan.check_budget(dplan.DecisionPlan(runs, {}, budget_s=90))


def test_an_engine_that_cannot_run_the_switch_says_why() -> None:
    reason = dplan.switch_refusal(get_engine("duckdb"), parse_spec("tde:aes-256-ctr"), dplan.switch_options({}))
    assert reason and "engine 'duckdb'" in reason and "cannot switch encryption on in place" in reason


def test_subrun_round_trips_and_names_its_command() -> None:
    sub = dplan.SubRun("cost", "cost", "sql", ("none", "fs:fscrypt"), {"dir": "/d"},
                       {"trials": 5, "memory_ratio": [2.0, 0.25]}, 0.0)
    assert dplan.SubRun.from_json(json.loads(json.dumps(sub.to_json()))) == sub
    assert sub.command("mariadb", {"nodes": "3"}, "o") == (
        "tdebench run --engine mariadb --workload sql --encryption none,fs:fscrypt --trials 5 --memory-ratio 2,0.25 "
        "--workload-option dir=/d --server-setting nodes=3 --out o")


# the ranking rule -----------------------------------------------------------------------------------------------
def test_better_needs_intervals_apart() -> None:
    assert better(_o(2, 1, 3), _o(10, 8, 12)) == 1
    assert better(_o(10, 8, 12), _o(2, 1, 3)) == -1
    assert better(_o(2, 1, 9), _o(10, 8, 12)) == 0  # overlap: a tie
    assert better(_o(2, None, None), _o(10, 8, 12)) == 0  # no interval: a tie
    assert better(_o(-5, -8, -2, "tpm", "tpm"), _o(-20, -25, -15, "tpm", "tpm")) == 1  # throughput: higher wins


def test_cheaper_on_one_figure_and_worse_on_another_is_a_tie() -> None:
    a = Candidate("a", {}, [_o(2, 1, 3), _o(30, 25, 35)])
    b = Candidate("b", {}, [_o(10, 8, 12), _o(5, 4, 6)])
    assert cheaper(a, b, ["reads", "writes"]) == [] and cheaper(b, a, ["reads", "writes"]) == []
    c = Candidate("c", {}, [_o(10, 8, 12), _o(30, 26, 34)])
    assert cheaper(a, c, ["reads", "writes"]) == ["reads"]


def _protection(spec: str, status: str) -> Protection:
    return Protection(spec, [{"id": "disk", "attacker": "copy of the whole disk", "status": status, "summary": "x"}])


def test_rank_leaves_out_what_does_not_stop_or_is_not_known() -> None:
    chosen = attackers.parse_attackers("stolen-disk")
    result = rank([_protection("a", "protected"), _protection("b", "exposed"), _protection("c", "not checked"),
                   _protection("d", "not applicable")], chosen, ["total"],
                  {"a": [_o(9, 8, 10)], "b": [_o(1, 0.5, 1.5)], "c": [_o(1, 0.5, 1.5)], "d": [_o(2, 1, 3)]})
    by = {c.encryption: c for c in result.candidates}
    assert (by["a"].rank, by["d"].rank, by["b"].rank, by["c"].rank) == (2, 1, None, None)
    assert (by["a"].status, by["b"].status, by["c"].status) == (STOPS, LEAKS, UNKNOWN)
    assert result.answer.startswith("d: the cheapest mechanism measured that stops a copy of the whole disk")
    assert [c.encryption for c in result.candidates][:2] == ["d", "a"]


def test_overlapping_intervals_are_a_tie_and_no_candidate_is_no_recommendation() -> None:
    chosen = attackers.parse_attackers("stolen-disk")
    tie = rank([_protection("a", "protected"), _protection("b", "protected")], chosen, ["total"],
               {"a": [_o(3, -1, 7)], "b": [_o(5, 1, 9)]})
    assert tie.answer.startswith("a and b tie") and "do not tell them apart" in tie.answer
    none = rank([_protection("a", "exposed")], chosen, ["total"], {"a": [_o(3, -1, 7)]})
    assert "recommends none" in none.answer and "a: does not stop" in none.answer


# the model of a decision directory ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def decision_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = make_decision(tmp_path_factory.mktemp("decide") / "d")
    load_decision(path)  # builds the sub-runs' reports once
    return path


def test_model_from_the_directory(decision_dir: Path) -> None:
    d = load_decision(decision_dir)
    assert [m.encryption for m in d.mechanisms] == ["tde:aes-256-ctr", "fs:fscrypt", "fs:gocryptfs"]
    assert [f.step for f in d.figures] == ["total", "q1_orders", "q2_report", "w1_new_orders"]
    assert [f.kind for f in d.figures] == ["headline", "query", "query", "write"]
    by = {m.encryption: m for m in d.mechanisms}
    assert by["fs:gocryptfs"].costs[(0, None)].ci_low_pct > 30  # the synthetic effect, resolved
    assert d.ranking.answer.startswith("fs:fscrypt: the cheapest")
    tde, fscrypt, gocrypt = (by[s].switching for s in ("tde:aes-256-ctr", "fs:fscrypt", "fs:gocryptfs"))
    assert (tde.method, tde.trials, tde.restart_s) == ("online", 3, pytest.approx(2.2))
    assert tde.tpm_during is not None and tde.tpm_during.resolved and tde.tpm_during.mean < 0.7
    assert fscrypt.offline and fscrypt.extra_disk == pytest.approx(6_000_002) and fscrypt.restart_s is None
    assert not gocrypt.measured and "cannot switch" in gocrypt.reason
    assert by["tde:aes-256-ctr"].protection.keys == [
        "tde:aes-256-ctr key: a key file beside the data (mode 0600; beside the data; protected by a file key on "
        "tmpfs)"]


def _asking(source: Path, target: Path, against: list[dict[str, str]]) -> Path:
    """A copy of a built decision directory whose request names other attackers."""
    shutil.copytree(source, target)
    data = json.loads((target / "decision.json").read_text())
    data["request"]["against"] = against
    (target / "decision.json").write_text(json.dumps(data))
    return target


def test_attackers_asked_decide_the_candidates(decision_dir: Path, tmp_path: Path) -> None:
    d = load_decision(_asking(decision_dir, tmp_path / "d", [{"name": "host-root", "row": "live_host"}]))
    assert d.ranking.answer == ("tde:aes-256-ctr: the only mechanism measured that stops a process on the running "
                                "host that reads its files (fs:fscrypt: does not stop; fs:gocryptfs: does not stop).")
    assert {c.encryption: c.status for c in d.ranking.candidates}["fs:fscrypt"] == LEAKS
    d = load_decision(_asking(decision_dir, tmp_path / "b", [{"name": "backups", "row": "backups"}]))
    assert "recommends none" in d.ranking.answer and "not known" in d.ranking.answer


def test_declared_headlines_are_the_ranking_figures(tmp_path: Path) -> None:
    effects = {**EFFECTS, "fs:fscrypt": (0.08, 0.05)}
    d = load_decision(make_decision(tmp_path / "d", headlines=True, effects=effects))
    assert [f.title for f in d.figures if f.kind == "headline"] == ["reads, weighted", "writes, weighted"]
    assert d.ranking.figures == ["reads, weighted, cache as configured", "writes, weighted, cache as configured"]
    # TDE reads cost less than fscrypt's, its writes more: neither ranks above the other
    ranks = {c.encryption: c.rank for c in d.ranking.candidates}
    assert ranks["tde:aes-256-ctr"] == ranks["fs:fscrypt"] == 1 and ranks["fs:gocryptfs"] == 2
    assert d.ranking.answer.startswith("tde:aes-256-ctr and fs:fscrypt tie")


def test_switching_reads_restarts_downtime_and_the_old_copy(tmp_path: Path) -> None:
    """switching.csv rows as a run that times TDE's restart and copies data into a filesystem layer writes them."""
    from tdebench.decide.sources import SubRunFiles
    from tdebench.decide.switching import switching

    tde = SubRunFiles("switch-tde", tmp_path, {"configs": []}, switching=[
        {"action": "restart_on", "method": "offline", "time_to_done_s": "3.5", "downtime_s": "3.25", "trials": "3"},
        {"action": "on", "method": "online", "time_to_done_s": "6.0", "trials": "3", "tpm_during_ratio": "0.6",
         "tpm_during_ci95_low": "0.5", "tpm_during_ci95_high": "0.7", "plaintext_hits_in_scope": "0"}])
    s = switching("tde:aes-256-ctr", tde, "", {})
    assert (s.method, s.seconds, s.downtime_s, s.restart_s, s.plaintext_left) == ("online", 6.0, None, 3.25, 0)
    fs = SubRunFiles("switch-fs", tmp_path, {"configs": []}, switching=[
        {"action": "on", "method": "offline", "time_to_done_s": "9.0", "downtime_s": "11.0", "trials": "2",
         "peak_extra_bytes": "1048576", "old_copy_hits": "12", "tpm_after_ratio": "0.9", "tpm_after_ci95_low": "0.8",
         "tpm_after_ci95_high": "0.95"}])
    s = switching("fs:fscrypt", fs, "", {})
    assert (s.offline, s.downtime_s, s.extra_disk, s.old_copy_left, s.restart_s) == (True, 11.0, 1048576.0, 12, None)
    assert s.tpm_after is not None and not s.tpm_after.resolved  # 2 trials: shown, not resolved
    assert not switching("fs:gocryptfs", None, "cannot switch it", {}).measured


def test_headlines_are_found_where_a_run_records_them() -> None:
    from tdebench.decide.costs import declared_headlines

    head = {"name": "reads", "test": "sql", "step": "reads", "metric": "elapsed", "title": "reads, weighted"}
    for manifest in ({"headlines": [head]}, {"plan": {"presentation": {"headlines": [head]}}},
                     {"presentation": {"headlines": [head]}}):
        assert [h.title for h in declared_headlines(manifest)] == ["reads, weighted"]
    one = declared_headlines({"headline": {"test": "power", "step": "total", "metric": "elapsed"}})
    assert [(h.test, h.step) for h in one] == [("power", "total")]
    assert declared_headlines({}) == []


def test_an_engine_without_backup_tools_gets_no_backups_run() -> None:
    engine = get_engine("duckdb")
    specs = mechanisms.choose(engine, None)
    cost = dplan.cost_run(specs, {"dir": "/d"}, precision=None, trials=3, ratios=(), page_source=None)
    built = dplan.build(engine, specs, cost, switch=dplan.switch_options({}), switch_trials=3, backups=True,
                        budget_s=600)
    assert [r.role for r in built.runs] == ["cost"]
    assert "no backup tool" in built.not_switched["backups"]
    assert built.lower_bound_s == 0

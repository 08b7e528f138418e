"""End to end: `tdebench run` on SQLite vs SQLCipher at SF 0.01, in-process so keys can be checked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tdebench.cli.app import main
from tdebench.encryption import issued_secrets
from tdebench.workloads.tpch import answers
from tests.e2e import examples as ex


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory, tpch_sf001) -> Path:
    """docs/examples/sqlite-power.toml (SQLite vs SQLCipher at SF 0.01, power test, answers kept) with one
    trial after its warm-up: the run every test of this module reads, and that example's end-to-end run."""
    out = tmp_path_factory.mktemp("e2e") / "run"
    data_root = Path(tpch_sf001[0]).parent
    with pytest.raises(SystemExit) as code:
        main(["run", str(ex.example("sqlite-power")), "--trials", "1", "--warmup", "1", "--out", str(out),
              "--data-dir", str(data_root)])
    assert code.value.code == 0
    ex.check_example_run(out)
    return out


def test_the_example_ran_both_configs(run_dir):
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert [c["label"] for c in manifest["plan"]["configs"]] == ["sqlite-none", "sqlite-sqlcipher-aes-256-cbc"]
    assert manifest["plan"]["workload_options"] == {"sf": 0.01, "tests": ["power"]}


def test_answers_of_both_configs_equal_the_reference(run_dir):
    ref = answers.reference_dir(0.01)
    for label in ("sqlite-none", "sqlite-sqlcipher-aes-256-cbc"):
        for number in range(1, 23):
            _, expected = answers.read_answer_csv(ref / f"q{number:02d}.csv")
            columns, actual = answers.read_answer_csv(run_dir / "answers" / label / f"q{number:02d}.csv")
            assert columns, f"{label} q{number} has no header"
            assert answers.compare_answers(number, expected, actual) == [], f"{label} q{number}"


def test_measurements_hold_every_query_of_warmup_and_trial(run_dir):
    rows = (run_dir / "measurements.csv").read_text().splitlines()
    header = rows[0].split(",")
    records = [dict(zip(header, r.split(","))) for r in rows[1:]]
    for label in ("sqlite-none", "sqlite-sqlcipher-aes-256-cbc"):
        power = [r for r in records if r["config"] == label and r["test"] == "power"]
        for status in ("warmup", "ok"):
            steps = {r["step"] for r in power if r["status"] == status}
            assert {f"q{n:02d}" for n in range(1, 23)} | {"total"} <= steps
        load = {r["step"] for r in records if r["config"] == label and r["test"] == "load"}
        assert {"lineitem", "orders", "total"} <= load


def test_manifest_and_verification(run_dir):
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert manifest["schema_version"] == 4 and manifest["status"] == "completed"
    assert "aes_ni" in manifest["host"] and manifest["host"]["cpu_flags"]
    assert len(manifest["data"]["files"]["lineitem.tbl"]["sha256"]) == 64
    assert [b["block"] for b in manifest["plan"]["blocks"]] == [0, 1]
    configs = {c["label"]: c for c in manifest["configs"]}
    assert configs["sqlite-sqlcipher-aes-256-cbc"]["settings"]["hmac"] == "HMAC-SHA512"
    verification = json.loads((run_dir / "verification.json").read_text())["configs"]
    assert verification["sqlite-none"]["marker_hits"] > 0 and verification["sqlite-none"]["encrypted_on_disk"] is False
    enc = verification["sqlite-sqlcipher-aes-256-cbc"]
    assert enc["marker_hits"] == 0 and enc["encrypted_on_disk"] is True and enc["status"]["enabled"] is True
    assert all(v["answers_equal"] for v in verification.values())


def test_no_key_or_password_anywhere_in_the_run_directory(run_dir):
    secrets_ = [s for s in issued_secrets() if len(s) >= 16]
    assert secrets_, "the run generated no key?"
    for path in run_dir.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            for secret in secrets_:
                assert secret.encode() not in data, f"secret in {path}"


def test_no_argument_run_is_sqlite_vs_sqlcipher(tmp_path, monkeypatch, tpch_sf001):
    """The README's main command: `tdebench` alone runs the default comparison into results/."""
    cache = tmp_path / "cache"
    (cache / "tdebench").mkdir(parents=True)
    (cache / "tdebench" / "tpch").symlink_to(Path(tpch_sf001[0]).parent)  # reuse the session's SF 0.01 data
    monkeypatch.setenv("XDG_CACHE_HOME", str(cache))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as code:
        main([])
    assert code.value.code == 0
    (run,) = (tmp_path / "results").iterdir()
    manifest = json.loads((run / "manifest.json").read_text())
    assert [c["label"] for c in manifest["plan"]["configs"]] == ["sqlite-none", "sqlite-sqlcipher-aes-256-cbc"]
    assert manifest["plan"]["workload_plan"]["sf"] == 0.01 and manifest["plan"]["trials"] == 3
    assert (run / "report" / "index.html").is_file()


def test_verify_command_checks_without_trials(tmp_path, tpch_sf001, capsys):
    out = tmp_path / "verify"
    with pytest.raises(SystemExit) as code:
        main(["verify", "--engine", "sqlite", "--out", str(out), "--data-dir", str(Path(tpch_sf001[0]).parent)])
    assert code.value.code == 0
    text = capsys.readouterr().out
    assert "sqlite-none: PLAINTEXT on disk" in text and "sqlite-sqlcipher-aes-256-cbc: encrypted on disk" in text
    verification = json.loads((out / "verification.json").read_text())["configs"]
    assert verification["sqlite-sqlcipher-aes-256-cbc"]["marker_hits"] == 0
    assert not [line for line in (out / "measurements.csv").read_text().splitlines() if ",power," in line]

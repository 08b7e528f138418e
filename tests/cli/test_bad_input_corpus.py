"""Bad-input corpus over every command and option: exit 2 (usage) or 3 (environment), one plain line on
stderr with the fix, no traceback, and nothing written where it should not be.

The CLI runs in-process (``main(argv)``) to keep the corpus fast; cases that need another environment
(PATH, missing binaries, fake servers) patch it with ``monkeypatch``.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tdebench.cli.app import main
from tests.sqlworkload import make_workload_dir

ROOT = Path(__file__).resolve().parents[2]
FIXTURE_RUN = ROOT / "tests" / "fixtures" / "rundir_sqlite"
ORDERS = str(ROOT / "docs" / "examples" / "orders-sql")


def cli(capfd, *args: str) -> tuple[int, str, str]:
    """Run ``tdebench ARGS`` in this process; (exit code, stdout, stderr)."""
    capfd.readouterr()
    with pytest.raises(SystemExit) as info:
        main(list(args))
    out, err = capfd.readouterr()
    return int(info.value.code or 0), out, err


def assert_one_line_error(code: int, err: str, expected_code: int, fragment: str) -> str:
    """The contract: the exit code, one stderr line naming the problem and the fix, no traceback."""
    lines = [line for line in err.splitlines() if line.strip()]
    assert code == expected_code, err
    assert len(lines) == 1, err
    assert "Traceback" not in err
    assert fragment.lower() in lines[0].lower(), lines[0]
    assert "fix:" in lines[0] or "--help" in lines[0], lines[0]
    return lines[0]


@pytest.fixture(autouse=True)
def _isolated_state(tmp_path, monkeypatch):
    """Ownership records and caches of these runs stay in the test's directory."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("TDEBENCH_PASSWORD_PLAIN", "not-a-real-password")
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def paths(tmp_path) -> dict[str, str]:
    """Placeholders of the corpus: a regular file, a completed run, an unfinished run, TOML files."""
    regular = tmp_path / "regular-file"
    regular.write_text("not a directory\n")
    done = tmp_path / "done-run"
    shutil.copytree(FIXTURE_RUN, done)
    open_run = tmp_path / "open-run"
    shutil.copytree(FIXTURE_RUN, open_run)
    manifest = json.loads((open_run / "manifest.json").read_text())
    manifest["status"] = "interrupted"
    (open_run / "manifest.json").write_text(json.dumps(manifest))
    broken = tmp_path / "broken-run"
    shutil.copytree(FIXTURE_RUN, broken)
    (broken / "manifest.json").write_text("{ not json")
    noplan = tmp_path / "noplan-run"
    shutil.copytree(FIXTURE_RUN, noplan)
    (noplan / "manifest.json").write_text(json.dumps({**manifest, "plan": None}))
    tomls = {
        "bad_syntax": "[run\nsf = 1\n",
        "unknown_key": '[run]\nscale = 1\n[[engines]]\nname = "sqlite"\n',
        "wrong_type": '[run]\nsf = "big"\n[[engines]]\nname = "sqlite"\n',
        "out_of_range": '[run]\ntrials = 0\n[[engines]]\nname = "sqlite"\n',
        "no_engines": "[run]\nsf = 0.01\n",
        "unknown_engine": '[[engines]]\nname = "oracle9i"\n',
        "unknown_spec": '[[engines]]\nname = "sqlite"\nencryption = ["rot13"]\n',
        "unsupported_spec": '[[engines]]\nname = "sqlite"\nencryption = ["none", "tde:aes-256-ctr"]\n',
        "bad_setting": '[[engines]]\nname = "sqlite"\nsettings = { page_size = "1000" }\n',
        "engines_not_list": '[engines]\nname = "sqlite"\n',
        "tests_bad": '[run]\ntests = ["power", "speed"]\n[[engines]]\nname = "sqlite"\n',
        "cache_bad": '[run]\ncache = "lukewarm"\n[[engines]]\nname = "sqlite"\n',
    }
    out = {"file": str(regular), "done": str(done), "open": str(open_run), "broken": str(broken),
           "noplan": str(noplan), "tmp": str(tmp_path)}
    for name, text in tomls.items():
        path = tmp_path / f"{name}.toml"
        path.write_text(text)
        out[f"toml_{name}"] = str(path)
    binary = tmp_path / "binary.toml"
    binary.write_bytes(b"\xff\xfe\x00garbage\x80")
    out["toml_binary"] = str(binary)
    (tmp_path / "a-dir.toml").mkdir()
    out["toml_dir"] = str(tmp_path / "a-dir.toml")
    log = tmp_path / "garbage.log"
    log.write_text("this is not the console log of a tdebench script\n")
    out["garbage_log"] = str(log)
    out["shop"] = str(make_workload_dir(tmp_path / "shop"))
    out["psql_log"] = str(ROOT / "tests" / "fixtures" / "logs" / "psql_power_stream00.log")
    return out


RUN = ["run", "--out", "{tmp}/out"]
CORPUS: list[tuple[str, list[str], int, str]] = [
    # run: unknown names
    ("engine-unknown", [*RUN, "--engine", "nosuchdb"], 2, "unknown engine 'nosuchdb'"),
    ("engine-empty", [*RUN, "--engine", ","], 2, "empty --engine"),
    ("encryption-unknown", [*RUN, "--encryption", "none,wat"], 2, "unknown encryption spec 'wat'"),
    ("encryption-empty", [*RUN, "--encryption", ","], 2, "empty --encryption"),
    ("encryption-twice", [*RUN, "--encryption", "none,sqlcipher:aes-256-cbc,sqlcipher:aes-256-cbc"], 2,
     "listed twice"),
    ("encryption-cipher", [*RUN, "--encryption", "tde:aes-512-cbc"], 2, "unknown cipher 'aes-512-cbc'"),
    ("encryption-unsupported", [*RUN, "--encryption", "none,tde:aes-128-cbc"], 2, "does not support"),
    ("workload-unknown", [*RUN, "--workload", "tpcz"], 2, "unknown workload 'tpcz'"),
    ("tests-unknown", [*RUN, "--tests", "power,nope"], 2, "bad value 'nope' for --tests"),
    ("tests-empty", [*RUN, "--tests", ","], 2, "--tests"),
    ("cache-unknown", [*RUN, "--cache", "tepid"], 2, "--cache"),
    ("reset-unknown", [*RUN, "--reset", "sometimes"], 2, "--reset"),
    ("setting-format", [*RUN, "--server-setting", "page_size"], 2, "bad --server-setting"),
    ("setting-empty-key", [*RUN, "--server-setting", "=1"], 2, "bad --server-setting"),
    ("setting-unknown", [*RUN, "--server-setting", "nosuch=1"], 2, "unknown sqlite setting"),
    ("setting-value", [*RUN, "--server-setting", "journal_mode=fast"], 2, "bad value 'fast'"),
    ("setting-range", [*RUN, "--server-setting", "page_size=1000"], 2, "bad page_size 1000"),
    ("workload-option-format", [*RUN, "--workload-option", "warehouses"], 2, "KEY=VALUE"),
    ("workload-dir-missing", [*RUN, "--workload", "sql", "--workload-dir", "{tmp}/nosuchdir"], 2,
     "nosuchdir: is not a directory"),
    ("workload-dir-other-workload", [*RUN, "--workload-dir", "{tmp}"], 2,
     "--workload-dir does not apply to --workload tpch"),
    ("option-unknown", [*RUN, "--no-such-option"], 2, "No such option"),
    ("encrypt-columns-unknown", [*RUN, "--engine", "postgres", "--encryption", "column:aes-256",
                                 "--encrypt-columns", "lineitem.nosuch"], 2, "has no column nosuch"),
    ("encrypt-columns-sqlite", [*RUN, "--encrypt-columns", "lineitem.l_comment"], 2, "encrypt_columns"),
    ("target-format", [*RUN, "--target", "nourl"], 2, "bad --target 'nourl'"),
    ("target-password-in-url", [*RUN, "--target", "plain=mysql://u:pw@127.0.0.1:1/db"], 2, "contains a password"),
    ("target-with-engine", [*RUN, "--engine", "mariadb", "--target", "plain=mysql://u@127.0.0.1:1/db"], 2,
     "--target replaces"),
    ("target-unreachable", [*RUN, "--target", "plain=mysql://u@127.0.0.1:1/db"], 3, "cannot connect to target"),
    ("override-without-target", [*RUN, "--override-encryption-check", "all"], 2, "applies to --target only"),
    ("option-missing-value", ["run", "--sf"], 2, "requires an argument"),
    # run: wrong types
    ("sf-type", [*RUN, "--sf", "abc"], 2, "Invalid value for '--sf'"),
    ("trials-type", [*RUN, "--trials", "1.5"], 2, "Invalid value for '--trials'"),
    ("streams-type", [*RUN, "--streams", "two"], 2, "Invalid value for '--streams'"),
    ("seed-type", [*RUN, "--seed", "x"], 2, "Invalid value for '--seed'"),
    ("timeout-type", [*RUN, "--query-timeout", "soon"], 2, "Invalid value for '--query-timeout'"),
    ("warehouses-type", [*RUN, "--warehouses", "many"], 2, "Invalid value for '--warehouses'"),
    ("nodes-type", [*RUN, "--engine", "galera", "--nodes", "three"], 2, "Invalid value for '--nodes'"),
    ("nodes-one", [*RUN, "--engine", "galera", "--nodes", "1"], 2, "--nodes 1 is no cluster"),
    ("nodes-not-a-cluster", [*RUN, "--nodes", "3"], 2, "--nodes applies to cluster engines only"),
    ("rows-type", [*RUN, "--rows", "1e3x"], 2, "Invalid value for '--rows'"),
    ("tcp-value", [*RUN, "--tcp=maybe"], 2, "--tcp"),
    # run: out-of-range values
    ("sf-zero", [*RUN, "--sf", "0"], 2, "bad value 0.0 for --sf"),
    ("sf-negative", [*RUN, "--sf", "-1"], 2, "bad value -1.0 for --sf"),
    ("sf-nan", [*RUN, "--sf", "nan"], 2, "--sf"),
    ("sf-inf", [*RUN, "--sf", "inf"], 2, "--sf"),
    ("trials-zero", [*RUN, "--trials", "0"], 2, "bad value 0 for --trials"),
    ("warmup-two", [*RUN, "--warmup", "2"], 2, "--warmup"),
    ("warmup-negative", [*RUN, "--warmup", "-1"], 2, "--warmup"),
    ("streams-zero", [*RUN, "--streams", "0"], 2, "bad value 0 for --streams"),
    ("streams-huge", [*RUN, "--streams", "1000"], 2, "--streams"),
    ("timeout-negative", [*RUN, "--query-timeout", "-1"], 2, "--query-timeout"),
    ("timeout-nan", [*RUN, "--query-timeout", "nan"], 2, "--query-timeout"),
    ("max-failures-zero", [*RUN, "--max-failures", "0"], 2, "--max-failures"),
    # run: schedules and precision
    ("precision-zero", [*RUN, "--precision", "0"], 2, "--precision '0' is not a half-width"),
    ("precision-word", [*RUN, "--precision", "abc"], 2, "--precision 'abc' is not a half-width"),
    ("precision-negative", [*RUN, "--precision", "-1%"], 2, "--precision '-1%'"),
    ("precision-huge", [*RUN, "--precision", "150%"], 2, "--precision '150%'"),
    ("precision-pilot", [*RUN, "--precision", "1%", "--trials", "2"], 2, "pilot"),
    ("precision-plain-only", [*RUN, "--precision", "1%", "--encryption", "none"], 2, "plain twin"),
    ("precision-no-headline", [*RUN, "--precision", "1%", "--workload", "load"], 2, "headline"),
    ("max-time-negative", [*RUN, "--max-time", "-1"], 2, "--max-time '-1' is not a positive duration"),
    ("max-time-zero", [*RUN, "--max-time", "0m"], 2, "--max-time '0m'"),
    ("max-time-word", [*RUN, "--max-time", "soon"], 2, "--max-time 'soon'"),
    ("max-trials-alone", [*RUN, "--max-trials", "5"], 2, "--max-trials applies to --precision"),
    # run: the interleaved OLTP schedule and latency targets
    ("slice-zero", [*RUN, "--workload", "tpcc", "--slice", "0"], 2, "slice must be at least 1 s"),
    ("slice-word", [*RUN, "--workload", "tpcc", "--slice", "abc"], 2, "bad value 'abc' for tpcc option 'slice'"),
    ("slice-short", [*RUN, "--workload", "tpcc", "--slice", "500ms"], 2, "slice must be at least 1 s"),
    ("slice-over-duration", [*RUN, "--workload", "tpcc", "--slice", "90s", "--duration", "30s"], 2,
     "longer than duration"),
    ("slice-other-workload", [*RUN, "--slice", "5s"], 2, "--slice does not apply to --workload tpch"),
    ("repeat-with-slices", [*RUN, "--workload", "tpcc", "--repeat", "3"], 2, "--repeat does not apply to --workload tpcc"),
    ("precision-metric-unknown", [*RUN, "--workload", "tpcc", "--precision", "5%", "--precision-metric", "p90"], 2,
     "--precision-metric p90: workload 'tpcc' has no figure 'p90' to watch (it has: headline, cpu, p50, p95, p99)"),
    ("precision-metric-syntax", [*RUN, "--precision", "5%", "--precision-metric", "headline=lots"], 2,
     "'headline=lots' is not a headline name"),
    ("precision-metric-sql-name", [*RUN, "--workload", "sql", "--workload-dir", "{shop}", "--precision", "5%",
                                   "--precision-metric", "reads,nosuch"], 2,
     "workload 'sql' has no figure 'nosuch' to watch (it has: reads, writes, "),
    ("precision-metric-alone", [*RUN, "--workload", "tpcc", "--precision-metric", "p95"], 2,
     "--precision-metric applies to --precision runs only"),
    ("precision-metric-no-latency", [*RUN, "--precision", "2%", "--precision-metric", "p95"], 2,
     "records no latency percentile"),
    ("precision-metric-no-cpu", [*RUN, "--precision", "2%", "--precision-metric", "cpu", "--tests", "throughput"], 2,
     "records no server CPU time"),
    ("precision-metric-no-power", [*RUN, "--workload", "tpcc", "--precision", "2%", "--precision-metric", "power"], 2,
     "records no Power@Size"),
    ("max-trials-below-pilot", [*RUN, "--precision", "1%", "--max-trials", "5"], 2, "below the 8 trials"),
    ("max-trials-type", [*RUN, "--max-trials", "many"], 2, "Invalid value for '--max-trials'"),
    ("repeat-zero", [*RUN, "--repeat", "0"], 2, "--repeat must be a whole number of at least 1"),
    ("repeat-negative", [*RUN, "--repeat", "-2"], 2, "--repeat must be"),
    ("repeat-type", [*RUN, "--repeat", "x"], 2, "Invalid value for '--repeat'"),
    ("repeat-block", [*RUN, "--repeat", "3", "--schedule", "block"], 2, "--repeat applies to --schedule query"),
    ("schedule-unknown", [*RUN, "--schedule", "round-robin"], 2, "--schedule must be block, query, duet or turns"),
    ("schedule-cold", [*RUN, "--schedule", "query", "--cache", "cold"], 2, "cannot run --cache cold"),
    ("pin-value", [*RUN, "--pin=maybe"], 2, "--pin"),
    ("nice-range", [*RUN, "--nice", "-30"], 2, "--nice must be a whole number from -20 to 19"),
    ("nice-type", [*RUN, "--nice", "low"], 2, "Invalid value for '--nice'"),
    ("restart-twins-cold", [*RUN, "--restart-twins", "--cache", "cold"], 2, "--cache cold restarts every server"),
    ("restart-twins-embedded", [*RUN, "--restart-twins"], 2, "--restart-twins: sqlite cannot restart keeping"),
    ("restart-twins-value", [*RUN, "--restart-twins=yes"], 2, "--restart-twins"),
    ("no-restart-twins-value", [*RUN, "--no-restart-twins=no"], 2, "--no-restart-twins"),
    ("baseline-not-a-config", [*RUN, "--baseline", "sqlite-nope"], 2, "baseline 'sqlite-nope' is not a config"),
    ("baseline-encrypted", [*RUN, "--baseline", "sqlite-sqlcipher-aes-256-cbc"], 2, "is not plain"),
    ("fault-no-time", [*RUN, "--fault", "kill-node"], 2, "bad --fault 'kill-node': say when"),
    ("fault-not-declared", [*RUN, "--fault", "kill-node@50%"], 2, "declares no such fault"),
    ("memory-ratio-zero", [*RUN, "--memory-ratio", "0"], 2, "--memory-ratio"),
    ("memory-ratio-word", [*RUN, "--memory-ratio", "x"], 2, "'x' is not a number"),
    ("memory-ratio-twice", [*RUN, "--memory-ratio", "1,1"], 2, "a ratio is listed twice"),
    ("memory-ratio-too-big", [*RUN, "--memory-ratio", "100000"], 3, "--memory-ratio 100000 needs"),
    ("page-source-word", [*RUN, "--memory-ratio", "0.5", "--page-source", "ssd"], 2,
     "bad value 'ssd' for --page-source"),
    ("page-source-alone", [*RUN, "--page-source", "memory"], 2, "it needs --memory-ratio"),
    ("page-source-sqlite-disk", [*RUN, "--memory-ratio", "0.5", "--page-source", "disk"], 2,
     "the pages sqlite's cache misses come from memory only"),
    # run: files and directories
    ("experiment-missing", ["run", "{tmp}/nosuch.toml"], 2, "cannot read experiment file"),
    ("experiment-is-dir", ["run", "{toml_dir}"], 2, "cannot read experiment file"),
    ("experiment-binary", ["run", "{toml_binary}"], 2, "binary.toml"),
    ("toml-syntax", ["run", "{toml_bad_syntax}"], 2, "is not valid TOML"),
    ("toml-unknown-key", ["run", "{toml_unknown_key}"], 2, "unknown key 'run.scale'"),
    ("toml-wrong-type", ["run", "{toml_wrong_type}"], 2, "'run.sf'"),
    ("toml-out-of-range", ["run", "{toml_out_of_range}"], 2, "'run.trials'"),
    ("toml-no-engines", ["run", "{toml_no_engines}"], 2, "engines"),
    ("toml-engines-table", ["run", "{toml_engines_not_list}"], 2, "engines"),
    ("toml-unknown-engine", ["run", "{toml_unknown_engine}"], 2, "unknown engine 'oracle9i'"),
    ("toml-unknown-spec", ["run", "{toml_unknown_spec}"], 2, "unknown encryption spec 'rot13'"),
    ("toml-unsupported-spec", ["run", "{toml_unsupported_spec}"], 2, "does not support"),
    ("toml-bad-setting", ["run", "{toml_bad_setting}"], 2, "bad page_size 1000"),
    ("toml-bad-tests", ["run", "{toml_tests_bad}"], 2, "'run.tests[1]'"),
    ("toml-bad-cache", ["run", "{toml_cache_bad}"], 2, "'run.cache'"),
    ("out-under-file", ["run", "--out", "{file}/run"], 2, "cannot write the output directory"),
    ("out-not-empty", ["run", "--out", "{done}"], 2, "is not empty"),
    ("resume-missing", ["run", "--resume", "{tmp}/nosuch"], 2, "is not a tdebench run directory"),
    ("resume-file", ["run", "--resume", "{file}"], 2, "is not a tdebench run directory"),
    ("resume-bad-json", ["run", "--resume", "{broken}"], 2, "not valid JSON"),
    ("resume-no-plan", ["run", "--resume", "{noplan}"], 2, "has no plan"),
    ("data-dir-under-file", [*RUN, "--data-dir", "{file}/data", "--trials", "1"], 2, "cannot"),
    ("work-dir-under-file", [*RUN, "--work-dir", "{file}/work", "--trials", "1", "--data-dir", "{data}"], 2,
     "cannot"),
    # run: the disk guard (refused before any data is generated)
    ("disk-guard", [*RUN, "--sf", "100000"], 3, "not enough disk space"),
    # other commands
    ("verify-engine", ["verify", "--engine", "nosuchdb", "--out", "{tmp}/out"], 2, "unknown engine 'nosuchdb'"),
    ("verify-spec", ["verify", "--encryption", "rot13", "--out", "{tmp}/out"], 2, "unknown encryption spec"),
    ("verify-sf", ["verify", "--sf", "0", "--out", "{tmp}/out"], 2, "--sf"),
    ("verify-sf-type", ["verify", "--sf", "x"], 2, "Invalid value for '--sf'"),
    ("verify-setting", ["verify", "--server-setting", "nosuch=1", "--out", "{tmp}/out"], 2, "unknown sqlite setting"),
    ("verify-out-under-file", ["verify", "--out", "{file}/v"], 2, "cannot write the output directory"),
    ("verify-option", ["verify", "--bogus"], 2, "No such option"),
    ("command-unknown", ["frobnicate"], 2, "No such command"),
    ("engines-extra-arg", ["engines", "extra"], 2, "unexpected extra argument"),
    ("report-missing", ["report", "{tmp}/nosuch"], 2, "is not a tdebench run directory"),
    ("report-no-arg", ["report"], 2, "Missing argument"),
    ("report-file", ["report", "{file}"], 2, "is not a tdebench run directory"),
    ("compare-missing", ["compare", "{done}", "{tmp}/nosuch"], 2, "is not a tdebench run directory"),
    ("compare-one-arg", ["compare", "{done}"], 2, "Missing argument"),
    ("compare-out-under-file", ["compare", "{done}", "{open}", "--out", "{file}/cmp"], 2, "regular-file"),
    ("ciphers-seconds-zero", ["ciphers", "--seconds", "0"], 2, "--seconds must be a positive"),
    ("ciphers-seconds-nan", ["ciphers", "--seconds", "nan"], 2, "--seconds must be a positive"),
    ("ciphers-seconds-type", ["ciphers", "--seconds", "abc"], 2, "Invalid value for '--seconds'"),
    ("ciphers-block-odd", ["ciphers", "--block-bytes", "15"], 2, "--block-bytes must be a multiple of 16"),
    ("ciphers-block-huge", ["ciphers", "--block-bytes", "134217728"], 2, "--block-bytes"),
    ("ciphers-out-dir", ["ciphers", "--out", "{tmp}"], 2, "cannot write the cipher table"),
    ("ciphers-out-under-file", ["ciphers", "--seconds", "0.01", "--out", "{file}/x.json"], 2,
     "cannot write the cipher table"),
    ("script-no-dialect", ["script"], 2, "Missing option '--dialect'"),
    ("script-dialect", ["script", "--dialect", "db2", "--out", "{tmp}/s"], 2, "db2"),
    ("script-test", ["script", "--dialect", "postgres", "--test", "speed", "--out", "{tmp}/s"], 2, "speed"),
    ("script-streams", ["script", "--dialect", "postgres", "--test", "throughput", "--streams", "0",
                        "--out", "{tmp}/s"], 2, "stream"),
    ("script-sf", ["script", "--dialect", "postgres", "--sf", "-1", "--out", "{tmp}/s"], 2, "-1"),
    ("script-sf-type", ["script", "--dialect", "postgres", "--sf", "big"], 2, "Invalid value for '--sf'"),
    ("script-q15", ["script", "--dialect", "postgres", "--q15", "inline", "--out", "{tmp}/s"], 2, "inline"),
    ("script-out-under-file", ["script", "--dialect", "postgres", "--out", "{file}/s"], 2, "regular-file"),
    ("import-no-logs", ["import", "--dialect", "postgres", "--config", "plain", "--out", "{tmp}/i"], 2,
     "Missing argument"),
    ("import-missing-log", ["import", "{tmp}/nosuch.log", "--dialect", "postgres", "--config", "plain",
                            "--out", "{tmp}/i"], 2, "nosuch.log"),
    ("import-dialect", ["import", "{garbage_log}", "--dialect", "db2", "--config", "plain", "--out", "{tmp}/i"], 2,
     "db2"),
    ("import-no-config", ["import", "{garbage_log}", "--dialect", "postgres", "--out", "{tmp}/i"], 2,
     "Missing option '--config'"),
    ("import-spec", ["import", "{garbage_log}", "--dialect", "postgres", "--config", "plain", "--encryption",
                     "rot13", "--out", "{tmp}/i"], 2, "rot13"),
    ("import-trial", ["import", "{garbage_log}", "--dialect", "postgres", "--config", "plain", "--trial", "0",
                      "--out", "{tmp}/i"], 2, "trial"),
    ("import-setting", ["import", "{garbage_log}", "--dialect", "postgres", "--config", "plain", "--setting",
                        "x", "--out", "{tmp}/i"], 2, "bad --setting"),
    ("import-garbage", ["import", "{garbage_log}", "--dialect", "postgres", "--config", "plain",
                        "--out", "{tmp}/i"], 2, "garbage.log"),
    ("import-out-under-file", ["import", "{psql_log}", "--dialect", "postgres", "--config", "plain",
                               "--out", "{file}/i"], 2, "regular-file"),
    ("tde-setup-no-engine", ["tde-setup", "--encryption", "tde:aes-256"], 2, "Missing option '--engine'"),
    ("tde-setup-engine", ["tde-setup", "--engine", "db2", "--encryption", "tde:aes-256"], 2, "db2"),
    ("tde-setup-spec", ["tde-setup", "--engine", "mysql", "--encryption", "rot13"], 2, "rot13"),
    ("capture-no-from", ["capture", "--out", "{tmp}/c"], 2, "Missing option '--from'"),
    ("capture-scheme", ["capture", "--from", "db2://u@h/d", "--out", "{tmp}/c"], 2, "unknown URL scheme 'db2'"),
    ("capture-password", ["capture", "--from", "mariadb://u:hunter2@h/d", "--out", "{tmp}/c"], 2,
     "contains a password"),
    ("capture-no-file", ["capture", "--from", "{tmp}/nosuch.db", "--out", "{tmp}/c"], 2, "no such SQLite file"),
    ("capture-statements", ["capture", "--from", "{tmp}/nosuch.db", "--statements", "all", "--out", "{tmp}/c"], 2,
     "unknown --statements 'all'"),
    ("capture-log-garbage", ["capture", "--from", "{tmp}/nosuch.db", "--log", "{garbage_log}", "--out", "{tmp}/c"],
     2, "not a log format capture reads"),
    ("verify-engine", ["verify", "--engine", "nosuchdb"], 2, "unknown engine 'nosuchdb'"),
    ("verify-spec", ["verify", "--encryption", "tde:aes-128-cbc"], 2, "does not support encryption"),
    ("verify-sf", ["verify", "--sf", "0"], 2, "bad value 0.0 for --sf"),
    ("verify-setting", ["verify", "--server-setting", "nosuch=1"], 2, "unknown sqlite setting 'nosuch'"),
    ("fscrypt-storage-value", [*RUN, "--server-setting", "storage=tmpfs"], 2, "bad value 'tmpfs' for the setting "
     "storage"),
    ("fscrypt-unknown-variant", [*RUN, "--encryption", "none,fs:fscrypt-nosuch"], 2, "unknown cipher"),
    # run: switching encryption on: refused before any work
    ("encrypt-duckdb", [*RUN, "--workload", "encrypt", "--engine", "duckdb", "--encryption", "tde:aes-256-gcm"], 2,
     "cannot switch encryption on in place"),
    ("encrypt-sqlite3mc", [*RUN, "--workload", "encrypt", "--engine", "sqlite3mc", "--encryption",
                           "sqlite3mc:chacha20"], 2, "cannot switch encryption on in place"),
    ("encrypt-online-offline-engine", [*RUN, "--workload", "encrypt", "--encryption", "sqlcipher:aes-256-cbc",
                                       "--workload-option", "method=online"], 2,
     "on in place while serving"),
    ("encrypt-threads-zero", [*RUN, "--workload", "encrypt", "--engine", "mariadb", "--encryption", "tde:aes-256-ctr",
                              "--workload-option", "threads=0"], 2, "0 encryption threads would never switch"),
    ("encrypt-threads-zero-in-list", [*RUN, "--workload", "encrypt", "--engine", "mariadb", "--encryption",
                                      "tde:aes-256-ctr", "--workload-option", "threads=1,0"], 2, "threads"),
    ("encrypt-sf-online-engine-without-whole-server", [*RUN, "--workload", "encrypt", "--engine", "galera",
                                                      "--encryption", "tde:aes-256-ctr", "--sf", "0.01"], 2,
     "does not cover TPC-H loaded beside the TPC-C background"),
    ("encrypt-sf-alone-with-rate", [*RUN, "--workload", "encrypt", "--encryption", "sqlcipher:aes-256-cbc", "--sf",
                                    "0.01", "--workload-option", "rate=10"], 2, "no background to hold at a rate"),
    ("encrypt-sf-alone-beside-mixed", [*RUN, "--workload", "encrypt", "--engine", "sqlite,mariadb", "--encryption",
                                       "sqlite/sqlcipher:aes-256-cbc,mariadb/tde:aes-256-ctr", "--sf", "0.01"], 2,
     "others TPC-H alone offline"),
    ("encrypt-sf-repeating-suppliers", [*RUN, "--workload", "encrypt", "--engine", "mariadb", "--encryption",
                                        "tde:aes-256-ctr", "--sf", "0.002"], 2, "repeats a supplier"),
    ("encrypt-plain-target", [*RUN, "--workload", "encrypt", "--engine", "mariadb", "--encryption", "none"], 2,
     "names no encryption to switch on"),
    ("decide-one-mechanism", ["decide", "--engine", "mysql", "--workload-dir", ORDERS, "--out", "{tmp}/out"], 2,
     "has one way to encrypt"),
    ("decide-attacker", ["decide", "--engine", "sqlite", "--workload-dir", ORDERS, "--against", "thief", "--out",
                         "{tmp}/out"], 2, "unknown attacker 'thief'"),
    ("decide-budget", ["decide", "--engine", "sqlite", "--workload-dir", ORDERS, "--budget", "1m", "--out",
                       "{tmp}/out"], 2, "below the lower bound of this decision"),
    ("decide-resume-missing", ["decide", "--resume", "{tmp}/nosuch"], 2, "cannot be read"),
    # run: keys on a key server (docs/key-management.md)
    ("keys-unknown", [*RUN, "--keys", "vault"], 2, "unknown key source 'vault'"),
    ("keys-twice", [*RUN, "--keys", "file,file"], 2, "listed twice"),
    ("keys-plain-only", [*RUN, "--encryption", "none", "--keys", "openbao"], 2, "no config has a key"),
    ("keys-ctr", [*RUN, "--engine", "mariadb", "--encryption", "tde:aes-256-ctr", "--keys", "openbao"], 2,
     "AES-CBC only"),
    ("keys-no-path", [*RUN, "--engine", "mysql", "--encryption", "tde:aes-256-cbc", "--keys", "openbao"], 2,
     "has no way to take the keys"),
    ("keys-encrypt-own-keys", [*RUN, "--workload", "encrypt", "--encryption", "sqlcipher:aes-256-cbc", "--keys",
                               "openbao"], 2, "makes keys of its own"),
    ("keys-with-target", [*RUN, "--target", "plain=mysql://u@127.0.0.1:1/db", "--keys", "openbao"], 2,
     "apply to servers tdebench starts"),
    ("key-server-without-keys", [*RUN, "--key-server", "https://127.0.0.1:1/v1/kv"], 2, "--key-server names"),
    ("key-server-url", [*RUN, "--keys", "openbao", "--key-server", "ftp://x/kv"], 2, "bad --key-server"),
    ("fault-keyserver-no-keys", [*RUN, "--fault", "keyserver-down@5s"], 2, "no config keeps its keys"),
    ("fault-keyserver-mode", [*RUN, "--fault", "keyserver-down@5s,mode=pause"], 2, "mode=stop|seal"),
    ("encrypt-rotate-file-keys", [*RUN, "--workload", "encrypt", "--engine", "mariadb", "--encryption",
                                  "tde:aes-256-cbc", "--workload-option", "rotate=yes"], 2,
     "cannot rotate by key version"),
    ("encrypt-rotate-word", [*RUN, "--workload", "encrypt", "--engine", "mariadb", "--encryption", "tde:aes-256-cbc",
                             "--workload-option", "rotate=sometimes"], 2, "give auto, yes, no or threads"),
    ("cleanup-extra-arg", ["cleanup", "now"], 2, "unexpected extra argument"),
    ("cleanup-option", ["cleanup", "--force"], 2, "No such option"),
]


@pytest.mark.parametrize("case, args, code, fragment", CORPUS, ids=[c[0] for c in CORPUS])
def test_corpus(case, args, code, fragment, paths, capfd, tpch_sf001):
    values = {**paths, "data": str(Path(tpch_sf001[0]).parent)}
    argv = [a.format(**values) for a in args]
    before = {p.name for p in Path(paths["tmp"]).iterdir()}
    result, _, err = cli(capfd, *argv)
    assert_one_line_error(result, err, code, fragment)
    out = Path(paths["tmp"]) / "out"
    if (out / "manifest.json").exists():  # found out after the run directory was made: it says what happened
        assert json.loads((out / "manifest.json").read_text())["status"].startswith("failed:")
    else:  # refused before anything was written
        assert not out.exists() or not any(out.iterdir())
    after = {p.name for p in Path(paths["tmp"]).iterdir()}
    assert after - before <= {"out", "state", "s", "i", "cmp"}, after - before


def test_corpus_covers_every_command_and_run_option():
    """Every command, and every option of `run`, appears in the corpus (or below in this file)."""
    import typer

    from tdebench.cli.app import app

    group = typer.main.get_command(app)
    assert "run" in group.commands and "capture" in group.commands  # type: ignore[attr-defined]
    text = " ".join(" ".join(args) for _, args, _, _ in CORPUS)
    for name in group.commands:  # type: ignore[attr-defined]
        assert f"'{name}" in repr([a[0] for _, a, _, _ in CORPUS]), name
    covered_elsewhere = {"--help", "--out", "--keep-answers", "--no-keep-answers", "--keep", "--no-keep",
                         "--report", "--no-report", "--no-tcp", "--skip-disk-check", "--vus", "--duration",
                         "--rampup", "--batches", "--work-dir", "--data-dir", "--no-pin"}
    run = group.commands["run"]  # type: ignore[attr-defined]
    assert len(run.params) > 40, "run's options were not found"
    for param in run.params:
        for opt in [*param.opts, *param.secondary_opts]:
            if opt.startswith("--") and opt not in covered_elsewhere:
                assert opt in text or opt.replace("--", "--no-") in text, f"no bad-input case for run {opt}"


# --- environment problems: exit 3 ------------------------------------------------------------------------
def _fake_bin_dir(scripts: dict[str, str]) -> Path:
    """Executable shell scripts in a fresh world-readable directory (servers run as another user)."""
    directory = Path(tempfile.mkdtemp(prefix="t10-fakebin-"))
    directory.chmod(0o755)
    for name, body in scripts.items():
        path = directory / name
        path.write_text("#!/bin/sh\n" + body + "\n")
        path.chmod(0o755)
    return directory


@pytest.mark.server
def test_wrong_password_is_exit_3(tmp_path, capfd, monkeypatch):
    """A reachable server that refuses the password: exit 3 naming the target, the password nowhere."""
    from tdebench.encryption import parse_spec
    from tdebench.engines import get_engine
    from tdebench.api.engine import Config

    if not Path("/usr/lib/postgresql").is_dir() and shutil.which("pg_config") is None:
        pytest.skip("postgres is not installed (apt-get install postgresql)")
    engine = get_engine("postgres")
    workdir = Path(tempfile.mkdtemp(prefix="t10-wrongpw-"))
    workdir.chmod(0o755)
    instance = engine.create_instance(Config("postgres", parse_spec("none"), engine.default_settings(), tcp=True),
                                      workdir)
    try:
        instance.start()
        port = instance.pgcluster.port
        monkeypatch.setenv("TDEBENCH_PASSWORD_PLAIN", "not-the-password-4711")
        code, _, err = cli(capfd, "run", "--target", f"plain=postgresql://tdebench@127.0.0.1:{port}/tpch",
                           "--out", str(tmp_path / "out"), "--trials", "1")
    finally:
        instance.destroy()
        shutil.rmtree(workdir, ignore_errors=True)
    line = assert_one_line_error(code, err, 3, "cannot connect to target 'plain'")
    assert "password" in line.lower() and "not-the-password-4711" not in err


def test_missing_tpch_generator_is_exit_3(tmp_path, capfd, monkeypatch):
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    monkeypatch.setattr(sys, "executable", str(tmp_path / "no-python-here"))
    code, _, err = cli(capfd, "run", "--out", str(tmp_path / "out"), "--data-dir", str(tmp_path / "fresh"),
                       "--trials", "1")
    assert_one_line_error(code, err, 3, "cannot find tpchgen-cli")
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["status"].startswith("failed: cannot find tpchgen-cli")


def test_missing_mariadb_binaries_is_exit_3(tmp_path, capfd, monkeypatch):
    import tdebench.engines.mariadb.engine as mariadb

    monkeypatch.setattr(mariadb, "SBIN", (tmp_path / "nothing-here",))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    code, _, err = cli(capfd, "run", "--engine", "mariadb", "--out", str(tmp_path / "out"))
    assert_one_line_error(code, err, 3, "cannot find mariadbd")
    assert "apt-get install mariadb-server" in err


def test_missing_postgres_binaries_is_exit_3(tmp_path, capfd, monkeypatch):
    import tdebench.engines.postgres.server as pg

    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr(pg, "Path", _no_usr_lib_postgresql(pg.Path))
    code, _, err = cli(capfd, "run", "--engine", "postgres", "--out", str(tmp_path / "out"))
    assert_one_line_error(code, err, 3, "cannot find the PostgreSQL server binaries")


def _no_usr_lib_postgresql(path_type: type) -> type:
    class Hidden(type(path_type())):  # type: ignore[misc]
        def is_dir(self) -> bool:  # /usr/lib/postgresql looks absent
            return False if str(self) == "/usr/lib/postgresql" else super().is_dir()
    return Hidden


@pytest.mark.server
def test_missing_gocryptfs_is_exit_3(tmp_path, capfd, monkeypatch):
    import tdebench.engines.toolkit.fsencrypt as fsencrypt

    monkeypatch.setattr(fsencrypt, "_SEARCH", (tmp_path / "nothing",))
    if not Path("/usr/lib/postgresql").is_dir():
        pytest.skip("needs the Debian layout (/usr/lib/postgresql) to hide gocryptfs with PATH")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    code, _, err = cli(capfd, "run", "--engine", "postgres", "--encryption", "none,fs:gocryptfs",
                       "--out", str(tmp_path / "out"))
    assert_one_line_error(code, err, 3, "gocryptfs")


@pytest.mark.server
def test_mariadb_gocryptfs_without_gocryptfs_is_exit_3_before_any_work(tmp_path, capfd, monkeypatch):
    """fs:gocryptfs on MariaDB where gocryptfs is not installed: one line naming the packages, nothing written."""
    import tdebench.engines.toolkit.fsencrypt as fsencrypt

    monkeypatch.setattr(fsencrypt, "_SEARCH", (tmp_path / "nothing",))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    code, _, err = cli(capfd, "run", "--engine", "mariadb", "--encryption", "none,fs:gocryptfs",
                       "--out", str(tmp_path / "out"))
    assert "gocryptfs fuse3" in assert_one_line_error(code, err, 3, "gocryptfs")
    measured = tmp_path / "out" / "measurements.csv"
    assert not measured.exists() or len(measured.read_text().splitlines()) <= 1  # refused before any measurement


@pytest.mark.server
def test_mariadb_gocryptfs_without_dev_fuse_is_exit_3_before_any_work(tmp_path, capfd, monkeypatch):
    """fs:gocryptfs on MariaDB without /dev/fuse: one line naming the packages and the container flags."""
    real_stat = Path.stat

    def no_fuse(self, *args, **kwargs):
        if str(self) == "/dev/fuse":
            raise FileNotFoundError(self)
        return real_stat(self, *args, **kwargs)

    monkeypatch.setattr(Path, "stat", no_fuse)
    code, _, err = cli(capfd, "run", "--engine", "mariadb", "--encryption", "none,fs:gocryptfs",
                       "--out", str(tmp_path / "out"))
    line = assert_one_line_error(code, err, 3, "/dev/fuse does not exist")
    assert "modprobe fuse" in line
    measured = tmp_path / "out" / "measurements.csv"
    assert not measured.exists() or len(measured.read_text().splitlines()) <= 1  # refused before any measurement


@pytest.mark.parametrize("engine", ["sqlite", "mariadb"])
def test_fscrypt_without_root_is_exit_3_before_any_work(tmp_path, capfd, monkeypatch, engine):
    """fs:fscrypt needs root (losetup, mount, the ioctls): refused in one line before the run directory exists."""
    import tdebench.engines.toolkit.fscrypt as fscrypt

    monkeypatch.setattr(fscrypt.os, "geteuid", lambda: 1000)
    code, _, err = cli(capfd, "run", "--engine", engine, "--encryption", "none,fs:fscrypt", "--out",
                       str(tmp_path / "out"))
    assert_one_line_error(code, err, 3, "fs:fscrypt and storage=ext4-loop need root")
    assert not (tmp_path / "out").exists()


def test_fscrypt_without_loop_devices_is_exit_3(tmp_path, capfd, monkeypatch):
    import tdebench.engines.toolkit.fscrypt as fscrypt

    if os.geteuid() != 0:
        pytest.skip("the root check comes first")
    monkeypatch.setattr(fscrypt, "LOOP_CONTROL", tmp_path / "no-loop-control")
    code, _, err = cli(capfd, "run", "--encryption", "none,fs:fscrypt", "--out", str(tmp_path / "out"))
    assert_one_line_error(code, err, 3, "no loop device")
    assert not (tmp_path / "out").exists()


def test_fscrypt_adiantum_is_refused_where_the_kernel_lacks_it(tmp_path, capfd):
    """Tried for real on a scratch image: a kernel without Adiantum refuses in one line (exit 3)."""
    import tdebench.engines.toolkit.fscrypt as fscrypt

    if os.geteuid() != 0 or not Path("/dev/loop-control").exists():
        pytest.skip("needs root and loop devices")
    if not fscrypt.adiantum_problem():
        pytest.skip("this kernel has Adiantum")
    code, _, err = cli(capfd, "run", "--encryption", "none,fs:fscrypt-adiantum", "--out", str(tmp_path / "out"))
    assert_one_line_error(code, err, 3, "cannot encrypt with Adiantum")


def test_server_that_never_comes_up_is_exit_3(tmp_path, capfd, monkeypatch, tpch_sf001):
    """An unreachable server: mariadbd exits at once; the error names the log, nothing is left running."""
    import tdebench.engines.mariadb.engine as mariadb

    # its bootstrap (mariadbd --bootstrap, after a copy of the install template) works; the server cannot start
    fake = _fake_bin_dir({"mariadbd": 'case "$*" in *--bootstrap*) cat >/dev/null; exit 0;; esac\n'
                                      'echo "[ERROR] fake server: cannot bind" >&2; exit 1',
                          "mariadb-install-db": "exit 0", "mariadb": "exit 1"})
    try:
        monkeypatch.setattr(mariadb, "SBIN", (fake,))
        monkeypatch.setattr(mariadb, "START_TIMEOUT", 10.0)
        code, _, err = cli(capfd, "run", "--engine", "mariadb", "--out", str(tmp_path / "out"),
                           "--data-dir", str(Path(tpch_sf001[0]).parent), "--trials", "1")
    finally:
        shutil.rmtree(fake)
    lines = [line for line in err.splitlines() if line.startswith("tdebench: error:")]
    assert code == 3 and len(lines) == 1, err
    assert "exited during start-up" in lines[0] and "fake server: cannot bind" in lines[0]
    assert "Traceback" not in err
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["status"].startswith("failed:")
    assert not list((tmp_path / "state" / "tdebench" / "owned").glob("*.json"))


# --- full and read-only file systems -------------------------------------------------------------------------
def _mount_tmpfs(target: Path, size: str, readonly: bool = False) -> None:
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    target.mkdir(parents=True, exist_ok=True)
    options = f"size={size}" + (",ro" if readonly else "")
    result = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(target)], capture_output=True,
                            text=True, check=False)
    if result.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {result.stderr.strip()}")


def _umount(target: Path) -> None:
    subprocess.run(["umount", "-l", str(target)], capture_output=True, check=False)


def _remount(target: Path, options: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{options}", str(target)], check=True, capture_output=True)


@pytest.fixture
def readonly_results(tmp_path):
    """A read-only filesystem holding a completed run and an unfinished one."""
    target = tmp_path / "ro"
    _mount_tmpfs(target, "4m")
    try:
        shutil.copytree(FIXTURE_RUN, target / "done")
        shutil.copytree(FIXTURE_RUN, target / "open")
        manifest = json.loads((target / "open" / "manifest.json").read_text())
        (target / "open" / "manifest.json").write_text(json.dumps({**manifest, "status": "interrupted"}))
        _remount(target, "ro")
        yield target
    finally:
        _umount(target)


@pytest.mark.parametrize("args, fragment", [
    (["run", "--out", "{ro}/new"], "cannot write the output directory"),
    (["run", "--resume", "{ro}/open"], "cannot write to the run directory"),
    (["report", "{ro}/done"], "read-only file system"),
    (["compare", "{ro}/done", "{ro}/open"], "read-only file system"),
    (["script", "--dialect", "postgres", "--out", "{ro}/scripts"], "read-only file system"),
    (["ciphers", "--out", "{ro}/ciphers.json", "--seconds", "0.01"], "cannot write the cipher table"),
], ids=["run-out", "resume", "report", "compare", "script", "ciphers"])
def test_read_only_results_directory_is_exit_2(args, fragment, readonly_results, capfd):
    before = sorted(str(p) for p in readonly_results.rglob("*"))
    code, _, err = cli(capfd, *[a.format(ro=readonly_results) for a in args])
    assert_one_line_error(code, err, 2, fragment)
    assert sorted(str(p) for p in readonly_results.rglob("*")) == before


def test_full_disk_for_out_keeps_what_was_measured(tmp_path, capfd, tpch_sf001):
    """--out on a 128 KiB tmpfs: exit 3 naming the full disk, every row written so far intact, the manifest
    says what happened, and the run resumes to completion once there is room."""
    import csv

    target = tmp_path / "small"
    _mount_tmpfs(target, "128k")
    out = target / "run"
    data = str(Path(tpch_sf001[0]).parent)
    try:
        code, _, err = cli(capfd, "run", "--out", str(out), "--data-dir", data, "--encryption", "none",
                           "--trials", "4", "--warmup", "0", "--no-report", "--work-dir", str(tmp_path / "work"))
        errors = [line for line in err.splitlines() if line.startswith("tdebench: error:")]
        assert code == 3 and len(errors) == 1, err
        assert "disk filled up in the run directory" in errors[0] and "--resume" in errors[0]
        assert "Traceback" not in err
        with open(out / "measurements.csv", newline="") as handle:
            rows = list(csv.DictReader(handle))
        assert rows and all(None not in r and all(v is not None for v in r.values()) for r in rows)
        manifest = json.loads((out / "manifest.json").read_text())
        assert manifest["status"].startswith("failed: disk full"), manifest["status"]
        assert not (out / ".tdebench-reserve").exists()
        _remount(target, "size=16m")
        code, _, err = cli(capfd, "run", "--resume", str(out), "--no-report", "--work-dir", str(tmp_path / "work"))
        assert code == 0, err
        with open(out / "measurements.csv", newline="") as handle:
            again = list(csv.DictReader(handle))
        done = [(r["block"], r["config"]) for r in again
                if r["test"] == "trial" and r["metric"] == "completed" and r["status"] == "ok"]
        assert sorted(done) == [(str(b), "sqlite-none") for b in range(1, 5)]
        kept = [r for r in rows if r["test"] == "trial" and r["metric"] == "completed"]
        assert all(r in again for r in kept)  # trials completed before the disk filled were not redone
        assert json.loads((out / "manifest.json").read_text())["status"] == "completed"
    finally:
        _umount(target)
    assert not list((tmp_path / "work").glob("tdebench-*"))


def test_full_work_dir_is_exit_3(tmp_path, capfd, tpch_sf001):
    """The instances' filesystem fills while loading: exit 3 naming the work directory, nothing left behind."""
    target = tmp_path / "smallwork"
    _mount_tmpfs(target, "2m")
    try:
        code, _, err = cli(capfd, "run", "--out", str(tmp_path / "out"), "--data-dir",
                           str(Path(tpch_sf001[0]).parent), "--trials", "1", "--no-report", "--work-dir",
                           str(target), "--skip-disk-check")
        errors = [line for line in err.splitlines() if line.startswith("tdebench: error:")]
        assert code == 3 and len(errors) == 1, err
        assert "disk filled up" in errors[0] and "work directory" in errors[0]
        assert "Traceback" not in err
        assert not list(target.iterdir())
    finally:
        _umount(target)


def test_full_disk_guard_refuses_before_loading(tmp_path, capfd, tpch_sf001):
    target = tmp_path / "tiny"
    _mount_tmpfs(target, "8m")
    try:
        code, _, err = cli(capfd, "run", "--out", str(tmp_path / "out"), "--data-dir",
                           str(Path(tpch_sf001[0]).parent), "--work-dir", str(target))
        line = assert_one_line_error(code, err, 3, "not enough disk space")
        assert "--skip-disk-check" in line and str(target) in line
        assert not list(target.iterdir())
    finally:
        _umount(target)


def test_unwritable_state_dir_does_not_fail_the_run(tmp_path, capfd, monkeypatch, tpch_sf001):
    """Bookkeeping for `tdebench cleanup` that cannot be written costs a warning, not the run."""
    blocker = tmp_path / "state-file"
    blocker.write_text("x")
    monkeypatch.setenv("XDG_STATE_HOME", str(blocker))
    code, _, err = cli(capfd, "run", "--out", str(tmp_path / "out"), "--data-dir", str(Path(tpch_sf001[0]).parent),
                       "--encryption", "none", "--trials", "1", "--warmup", "0", "--no-report")
    assert code == 0, err
    assert "cannot record what this run owns" in err


def test_fixture_files_are_readable():
    assert FIXTURE_RUN.is_dir() and stat.S_ISREG((FIXTURE_RUN / "manifest.json").stat().st_mode)


@pytest.mark.parametrize("args, fragment", [
    (["--engine", "sqlite", "--encryption", "none,sqlite3mc:chacha20"], "which is engine sqlite3mc's"),
    (["--engine", "sqlite,sqlite3mc", "--encryption", "none,sqlite3mc:rc4"], "RC4 is broken"),
    (["--engine", "sqlite,sqlite3mc", "--encryption", "none,sqlite3mc:nosuch"], "unknown cipher 'nosuch'"),
    (["--engine", "sqlite,sqlite3mc", "--encryption", "none,mariadb/none"], "which --engine does not list"),
    (["--engine", "sqlite,sqlite3mc", "--baseline", "sqlite-nope"], "baseline 'sqlite-nope' is not a config"),
    (["--engine", "sqlite,sqlite3mc", "--baseline", "sqlite-sqlcipher-aes-256-cbc"], "is not plain"),
])
def test_cross_engine_runs_refuse_bad_input_in_one_line(tmp_path, capfd, args, fragment):
    """A run across engines of one family (sqlite and sqlite3mc): a spec of the other engine, a refused or unknown
    SQLite3MC cipher, an ENGINE/SPEC of an unlisted engine, a baseline that is not a plain config: exit 2, one
    line, before the run directory exists."""
    code, _, err = cli(capfd, "run", *args, "--out", str(tmp_path / "out"))
    assert_one_line_error(code, err, 2, fragment)
    assert not (tmp_path / "out").exists()


def test_encrypt_rate_the_baseline_cannot_reach_is_one_line(tmp_path, capfd, tpcc_w1):
    """A background rate the engine cannot reach on the plaintext baseline: exit 2, one line naming the rate
    reached and the fix, and the run directory says the run failed (the rate is never lowered silently)."""
    out = tmp_path / "out"
    code, _, err = cli(capfd, "run", "--engine", "sqlite", "--encryption", "sqlcipher:aes-256-cbc", "--workload",
                       "encrypt", "--warehouses", "1", "--workload-option", "rate=1000000", "--workload-option",
                       "steady=1s", "--workload-option", "rampup=0", "--trials", "1", "--warmup", "0", "--out",
                       str(out), "--data-dir", str(tpcc_w1[0].parent), "--work-dir", str(tmp_path / "work"))
    lines = [line for line in err.splitlines() if line.startswith("tdebench: error:")]  # after the load's progress
    assert code == 2 and len(lines) == 1 and "Traceback" not in err, err
    assert err.strip().splitlines()[-1] == lines[0]
    assert "below rate=1e+06 (not lowered)" in lines[0] and "transactions/s" in lines[0]
    assert "fix: lower rate, or add vus or warehouses" in lines[0]
    assert json.loads((out / "manifest.json").read_text())["status"].startswith("failed:")
    assert not [p for p in (tmp_path / "work").rglob("*") if p.is_file()]

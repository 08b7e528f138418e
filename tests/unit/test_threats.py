"""The threat model's pure parts: needles and names, verdict sentences, backup rows, /proc parsing, the report."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tdebench.encryption import generate_password
from tdebench.engines.toolkit.exposure import files_holding, files_on_disk, key_forms
from tdebench.engines.toolkit.sqlitefile import temp_in_memory
from tdebench.report import build_report
from tdebench.verify import hostfacts
from tdebench.verify.threat_checks import rows_bytes
from tdebench.verify.threat_scan import Scan, at_rest_files
from tdebench.verify.threat_rows import EXPOSED, NOT_APPLICABLE, NOT_CHECKED, PROTECTED, Needles, Row, backup_rows
from tdebench.verify.threats import merge_backups, verdict_sentence

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "rundir_sqlite"


def test_needles_name_canaries_and_scrub_their_values():
    needles = Needles(("TDEBENCH-CANARY-aaa", "TDEBENCH-CANARY-bbb"), ("DELIVER IN PERSON",))
    assert [n for n, _ in needles.named] == ["canary-1", "canary-2", "known:DELIVER IN PERSON"]
    data = b"x TDEBENCH-CANARY-bbb y TDEBENCH-CANARY-bbb DELIVER IN PERSON"
    assert needles.count_in(data) == {"canary-2": 2, "known:DELIVER IN PERSON": 1}
    password = generate_password()
    text = needles.scrub(f"near 'TDEBENCH-CANARY-aaa' with {password}")
    assert text == "near 'canary-1' with ***"
    assert needles.name_counts({"TDEBENCH-CANARY-aaa": 3, "TDEBENCH-CANARY-bbb": 0}) == {"canary-1": 3}


def test_verdict_sentence_names_what_is_stopped_and_what_is_not():
    rows = [Row("data_dir", PROTECTED, ""), Row("redo_log", PROTECTED, ""),
            Row("backups:mariadb-backup", PROTECTED, "", {"logical": False}),
            Row("backups:mariadb-dump", EXPOSED, "", {"logical": True}),
            Row("statement_log", EXPOSED, ""), Row("select_user", EXPOSED, ""),
            Row("network", NOT_APPLICABLE, ""), Row("swap_core", NOT_CHECKED, "")]
    assert verdict_sentence("tde:aes-256-ctr", rows) == (
        "tde:aes-256-ctr stops a stolen data directory, the redo log / WAL, and physical backups (mariadb-backup); "
        "it does not stop logical dumps (mariadb-dump), the statement log, or a database user with SELECT "
        "(not checked: swap and core dumps).")
    assert verdict_sentence("x", [Row("data_dir", EXPOSED, "")]) == "x does not stop a stolen data directory."
    with pytest.raises(ValueError):
        Row("data_dir", "safe", "")


def test_backup_rows_come_from_backups_json_verdicts():
    verdicts = {"kinds": {"mariadb-dump": {"logical": True, "tool": "mariadb-dump", "compressed": False}},
                "backups": {"mariadb-dump": {"encrypted": False, "marker_hits": 4, "known_plaintext_hits": 9,
                                             "files_scanned": 1, "bytes_scanned": 100}}}
    rows = backup_rows(verdicts, "no backup")
    assert [(r.id, r.status) for r in rows] == [("backups:mariadb-dump", EXPOSED)]
    assert "logical" in rows[0].attacker and "4 canary" in rows[0].summary
    assert [(r.id, r.status) for r in backup_rows({}, "run --workload backup")] == [("backups", NOT_CHECKED)]
    merged = merge_backups([Row("backups", NOT_CHECKED, "x"), Row("data_dir", PROTECTED, "")], verdicts, "n")
    assert {r.id for r in merged} == {"data_dir", "backups:mariadb-dump"}


def test_at_rest_files_merge_canary_and_known_hits():
    at_rest = {"files": [{"path": "a", "bytes": 10, "hits": {"canary-1": 2}}, {"path": "b", "bytes": 5, "hits": {}}],
               "known_plaintext": [{"path": "b", "bytes": 5, "hits": {"DELIVER IN PERSON": 3}}]}
    scan = Scan(at_rest_files(at_rest))
    assert scan.hits == {"canary-1": 2, "known:DELIVER IN PERSON": 3}
    assert scan.evidence()["files_with_hits"] == ["a", "b"] and scan.bytes == 15
    assert "canary-1 ×2" in scan.text("x")


def test_rows_bytes_keeps_ciphertext_raw():
    assert rows_bytes([[1, "abc", b"\x00\xff"]]) == b"1\nabc\n\x00\xff"


@pytest.mark.parametrize("pattern, soft, dumps", [
    ("core", "0", False), ("core", "unlimited", True), ("|/usr/lib/systemd/systemd-coredump %P", "0", True),
    ("|/bin/false", "1", False), ("", "unlimited", False)])
def test_core_dump_rules(pattern, soft, dumps):
    facts = hostfacts.MemoryFacts(pattern, "0")
    assert facts.dumps_core(hostfacts.ProcessMemory(1, "x", soft, soft, 0)) is dumps


def test_proc_parsing():
    limits = ("Limit                     Soft Limit           Hard Limit           Units\n"
              "Max core file size        0                    unlimited            bytes\n")
    assert hostfacts.parse_limits(limits) == ("0", "unlimited")
    swaps = hostfacts.parse_swaps("Filename Type Size Used Priority\n/swapfile file 1048572 0 -2\n")
    assert swaps == [{"device": "/swapfile", "type": "file", "size_kb": 1048572, "encrypted": False}]
    mine = hostfacts.memory_facts([__import__("os").getpid()])
    assert mine.processes and mine.processes[0].core_soft != "?"


def test_sqlite_temp_store_rules():
    assert temp_in_memory(["TEMP_STORE=2"], 0) and not temp_in_memory(["TEMP_STORE=2"], 1)
    assert not temp_in_memory(["TEMP_STORE=1"], 0) and temp_in_memory(["TEMP_STORE=1"], 2)
    assert temp_in_memory(["TEMP_STORE=3"], 1) and not temp_in_memory(["TEMP_STORE=0"], 2)


def test_key_search_reports_file_names_only(tmp_path):
    key = "00112233445566778899aabbccddeeff"
    (tmp_path / "a").write_bytes(b"xx" + bytes.fromhex(key) + b"yy")
    (tmp_path / "b").write_text(key)
    (tmp_path / "c").write_text("nothing")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "d").write_text(f"1;{key}\n")
    found = files_holding([tmp_path], key_forms(key), exclude=[tmp_path / "sub"])
    assert sorted(Path(p).name for p in found) == ["a", "b"]
    assert len(list(files_on_disk([tmp_path, tmp_path / "a"]))) == 4  # each file once


def _threats(sentence: str, rows: list[Row]) -> dict:
    return {"rows": [r.to_json() for r in rows], "final_pass": True, "sentence": sentence}


def test_report_shows_matrix_evidence_and_sentence(tmp_path):
    run_dir = tmp_path / "run"
    shutil.copytree(FIXTURE, run_dir, ignore=shutil.ignore_patterns("report", "*.py", "__pycache__"))
    verification = json.loads((run_dir / "verification.json").read_text())
    plain = [Row("data_dir", EXPOSED, "3 file(s) scanned: canary-1 ×1 in tpch.db"),
             Row("network", NOT_APPLICABLE, "no server")]
    enc = [Row("data_dir", PROTECTED, "3 file(s) scanned: no canary or known plaintext"),
           Row("temp_files", EXPOSED, "spill probe: canary-2 ×20000 in etilqs_1 (deleted, still open)"),
           Row("network", NOT_APPLICABLE, "no server")]
    sentence = verdict_sentence("sqlcipher:aes-256-cbc", enc)
    verification["configs"]["sqlite-none"]["threats"] = _threats("", plain)
    verification["configs"]["sqlite-sqlcipher-aes-256-cbc"]["threats"] = _threats(sentence, enc)
    (run_dir / "verification.json").write_text(json.dumps(verification))
    build_report(run_dir)
    md = (run_dir / "report" / "summary.md").read_text()
    html = (run_dir / "report" / "index.html").read_text()
    assert "## Threat model: sqlite" in md and "| temporary and spill files during the run | — | exposed |" in md
    assert f"(threat model): {sentence}" in md
    assert 'id="threats"' in html and "canary-2 ×20000 in etilqs_1" in html and sentence in html
    assert 'href="#threats"' in html

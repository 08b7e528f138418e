"""Backup workload without servers: options, the backup scanner, SQLite/SQLCipher kinds end to end, report text."""

from __future__ import annotations

import gzip
import json
import re
from dataclasses import replace
from pathlib import Path

import pytest

import tdebench.workloads

from tdebench.api.dialect import MARIADB, POSTGRES, SQLITE
from tdebench.encryption import parse_spec
from tdebench.engines import Config, get_engine
from tdebench.errors import RunFailed, UsageError
from tdebench.report.backups_view import BackupRow, sentences
from tdebench.api.trial import ConfigState
from tdebench.workloads.backup import sqlite_kinds
from tdebench.workloads.backup.kinds import Context
from tdebench.workloads.backup.options import parse_options
from tdebench.workloads.backup.scan import canary_markers, scan_backup
from tdebench.workloads.backup.workload import engine_kinds
from tdebench.workloads.crud import data
from tests.persons import fill_persons


def test_options_select_kinds_and_compression() -> None:
    o = parse_options({"kinds": "mariadb_dump,pg_dump_gz", "compression": "gzip"})
    assert o.kinds == ["mariadb_dump", "pg_dump"]
    assert o.wants("pg_dump_gz") and not o.wants("pg_dump") and not o.wants("mariadb_backup_gz")
    everything = parse_options({})
    assert all(everything.wants(k.info.name) for d in (SQLITE, MARIADB, POSTGRES) for k in engine_kinds(d))


@pytest.mark.parametrize("raw, words", [({"kinds": "tarball"}, ["kinds", "tarball", "mariadb_backup"]),
                                        ({"compression": "lz4"}, ["compression", "lz4", "gzip"]),
                                        ({"rows": 5}, ["unknown backup option 'rows'"])])
def test_bad_options_are_named(raw: dict, words: list[str]) -> None:
    with pytest.raises(UsageError) as err:
        parse_options(raw)
    assert all(w in err.value.one_line() for w in words)


def test_every_engine_has_plain_and_compressed_kinds() -> None:
    for dialect, tools in ((MARIADB, {"mariadb-backup", "mariadb-dump"}), (POSTGRES, {"pg_basebackup", "pg_dump"}),
                           (SQLITE, {"sqlite3_backup API", "VACUUM INTO"})):
        infos = [k.info for k in engine_kinds(dialect)]
        assert {i.tool for i in infos} == tools
        assert sorted(i.compressed for i in infos) == [False, False, True, True]
        assert len({i.name for i in infos}) == 4


@pytest.mark.parametrize("tools, names", [(("sqlite-dump",), ["vacuum_into", "vacuum_into_gz"]),
                                          (("sqlite-backup-api",), ["sqlite_backup_api", "sqlite_backup_api_gz"]),
                                          (("pg_dump", "mariadb-backup"),
                                           ["pg_dump", "pg_dump_gz", "mariadb_backup", "mariadb_backup_gz"])])
def test_a_kind_is_offered_only_when_the_dialect_names_its_tool(tools: tuple[str, ...], names: list[str]) -> None:
    assert sorted(k.info.name for k in engine_kinds(replace(SQLITE, backup_tools=tools))) == sorted(names)


def test_scanner_counts_markers_and_known_plaintext_in_files_and_directories(tmp_path: Path) -> None:
    (tmp_path / "dir" / "sub").mkdir(parents=True)
    (tmp_path / "dir" / "sub" / "a.ibd").write_bytes(b"xx MARKER-1 yy Customer#000000001 MARKER-1")
    (tmp_path / "dir" / "b").write_bytes(b"nothing")
    plain = scan_backup([tmp_path / "dir"], ["MARKER-1"], ("Customer#000000001",))
    assert (plain.marker_hits, plain.known_plaintext_hits, plain.encrypted) == (2, 1, False)
    assert plain.files_with_hits == ["dir/sub/a.ibd"] and plain.files_scanned == 2
    (tmp_path / "noise.bin").write_bytes(bytes(range(256)) * 10)
    assert scan_backup([tmp_path / "noise.bin"], ["MARKER-1"], ("Customer#000000001",)).encrypted


def _context(spec: str, tmp_path: Path, **settings: str):
    engine = get_engine("sqlite")
    config = Config("sqlite", parse_spec(spec), {**engine.default_settings(), **settings})
    inst = engine.create_instance(config, tmp_path / "work")
    inst.start()
    fill_persons(inst, 800, 5)
    inst.plant_canaries(["TDEBENCH-CANARY-unit-test-1", "TDEBENCH-CANARY-unit-test-2"])
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    return Context(ConfigState(config, engine, inst), ["persons"], {"persons": 800}, scratch)


KINDS = {k.info.name: k for k in sqlite_kinds.kinds()}
CASES = [("none", "sqlite_backup_api"), ("none", "vacuum_into_gz"), ("sqlcipher:aes-256-cbc", "sqlite_backup_api_gz"),
         ("sqlcipher:aes-256-cbc", "vacuum_into")]


@pytest.mark.parametrize("spec, name", CASES)
def test_sqlite_kinds_back_up_scan_and_restore(spec: str, name: str, tmp_path: Path) -> None:
    ctx, kind = _context(spec, tmp_path), KINDS[name]
    try:
        _back_up_scan_restore(ctx, kind)
    finally:
        ctx.state.instance.destroy()


def test_backup_api_copy_keeps_non_default_cipher_settings(tmp_path: Path) -> None:
    """The backup API's target file is opened by the instance's DatabaseFile with the instance's key,
    page size and HMAC setting; a copy with other settings could not be opened again after the restore."""
    ctx = _context("sqlcipher:aes-256-cbc", tmp_path, page_size="8192", cipher_use_hmac="off", journal_mode="wal")
    try:
        _back_up_scan_restore(ctx, KINDS["sqlite_backup_api"])
    finally:
        ctx.state.instance.destroy()


def test_kinds_of_server_tools_refuse_an_instance_without_server_access(tmp_path: Path) -> None:
    """An embedded database has a file to copy but no server for tools to reach (Instance.server_access() is None):
    a kind that needs one says so in one line, naming the hook, instead of failing on a missing attribute."""
    ctx = _context("sqlcipher:aes-256-cbc", tmp_path)
    try:
        assert ctx.state.instance.server_access() is None
        assert ctx.database_file.path == ctx.state.instance.path
        with pytest.raises(RunFailed, match=r"names backup tools but.*server_access\(\)"):
            ctx.server.tools()
    finally:
        ctx.state.instance.destroy()


PRIVATE_ACCESS = re.compile(r"\b(?:instance|inst|cluster|engine|server)\._[a-z]|getattr\([^,]+,\s*[\"']_[a-z]")


def test_workloads_use_only_public_engine_api() -> None:
    """No workload reaches into an engine's private attributes (they may change with the engine)."""
    root = Path(tdebench.workloads.__file__).parent
    hits = [f"{path.relative_to(root)}:{n}: {line.strip()}" for path in sorted(root.rglob("*.py"))
            for n, line in enumerate(path.read_text().splitlines(), 1) if PRIVATE_ACCESS.search(line)]
    assert not hits, "\n".join(hits)


def _back_up_scan_restore(ctx: Context, kind) -> None:
    encrypted = not ctx.state.config.spec.is_plain
    markers = canary_markers(ctx.state.instance)
    assert markers == ["TDEBENCH-CANARY-unit-test-1", "TDEBENCH-CANARY-unit-test-2"]
    artifact = kind.backup(ctx)
    if kind.info.compressed:
        assert artifact.name.endswith(".gz") and gzip.decompress(artifact.read_bytes())
    scan = scan_backup(kind.scan_paths(ctx, artifact), markers, (data.KNOWN_CITY,))
    assert scan.encrypted is encrypted
    if not encrypted:
        assert scan.marker_hits == 2 and scan.known_plaintext_hits >= 1
    conn = ctx.state.instance.connect()
    conn.execute("DELETE FROM persons WHERE id > 100")  # the restore must bring these back
    conn.close()
    assert kind.restore(ctx, artifact) > 0
    assert kind.restored_counts(ctx) == {"persons": 800}


def _row(kind: str, tool: str, enc: str, encrypted: bool, logical: bool) -> BackupRow:
    return BackupRow("mariadb", kind, f"m-{enc}", enc, enc == "none", ("1 s", ""), ("2 s", ""), "1 MiB", encrypted,
                     0 if encrypted else 5, {"tool": tool, "logical": logical})


def test_report_sentences_say_it_plainly() -> None:
    rows = [_row("mariadb_dump", "mariadb-dump", "none", False, True),
            _row("mariadb_dump", "mariadb-dump", "tde:aes-256-ctr", False, True),
            _row("mariadb_dump_gz", "mariadb-dump", "tde:aes-256-ctr", False, True),
            _row("mariadb_backup", "mariadb-backup", "tde:aes-256-ctr", True, False)]
    text = sentences(rows)
    assert len(text) == 2
    assert "a logical dump is plaintext even under TDE".lower() in text[0].lower()
    assert "mariadb_dump, mariadb_dump_gz" in text[0] and "NOT encrypted for tde:aes-256-ctr" in text[0]
    assert text[1].startswith("mariadb-backup (mariadb_backup): the backup is encrypted")


def test_backups_json_feeds_the_report(tmp_path: Path) -> None:
    from tests.unit.test_crud_report import _write_run
    from tdebench.report import build_report

    run = tmp_path / "run"
    _write_run(run, configs=(("m-none", "none", 1.0), ("m-tde", "tde:aes-256-ctr", 1.1)), engine="mariadb")
    verdicts = {"kinds": {"mariadb_dump": {"tool": "mariadb-dump", "logical": True, "description": "logical"}},
                "configs": {"m-none": {"backups": {"mariadb_dump": {"encrypted": False, "marker_hits": 4}}},
                            "m-tde": {"backups": {"mariadb_dump": {"encrypted": False, "marker_hits": 4}}}}}
    (run / "backups.json").write_text(json.dumps(verdicts))
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["plan"]["workload"] = "backup"  # its Backups section is the backup workload's (Presentation.sections)
    (run / "manifest.json").write_text(json.dumps(manifest))
    md = build_report(run).with_name("summary.md").read_text()
    assert "## Backups" in md and "NO: plaintext" in md and "plaintext even under TDE" in md

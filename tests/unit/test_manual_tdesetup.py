"""``tdebench tde-setup`` texts and the three manual-mode commands through the real CLI entry point."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tdebench.encryption import issued_secrets
from tdebench.errors import UsageError
from tdebench.manual.tde_steps import setup_text
from tdebench.manual.tdesetup import validate

LOGS = Path(__file__).parents[1] / "fixtures" / "logs"


def test_mysql_steps() -> None:
    text = setup_text("mysql", "tde:aes-256-cbc")
    for needle in ("mysqld.my", '"components": "file://component_keyring_file"', "component_keyring_file.cnf",
                   '"read_only": false', "@@plugin_dir", "keyring_component_status", "default_table_encryption = ON",
                   "innodb_redo_log_encrypt = ON", "innodb_undo_log_encrypt = ON", "binlog_encryption = ON",
                   "ALTER TABLE <DATABASE>.lineitem ENCRYPTION = 'Y';", "ALTER TABLESPACE mysql ENCRYPTION = 'Y';",
                   "INFORMATION_SCHEMA.INNODB_TABLESPACES", "AES-256"):
        assert needle in text, needle
    tables_only = setup_text("mysql", "tde:aes-256@tables")
    assert "innodb_redo_log_encrypt" not in tables_only and "ENCRYPTION = 'Y'" in tables_only


@pytest.mark.parametrize("spec", ["tde:aes-128", "tde:aes-192-cbc", "tde:3des"])
def test_mysql_refuses_other_key_sizes_with_the_reason(spec: str) -> None:
    with pytest.raises(UsageError, match="AES-256 only"):
        validate("mysql", spec)


@pytest.mark.parametrize("spec,algorithm", [("tde:aes-128", "AES_128"), ("tde:aes-192", "AES_192"),
                                            ("tde:aes-256", "AES_256"), ("tde:3des", "TRIPLE_DES_3KEY")])
def test_sqlserver_steps(spec: str, algorithm: str) -> None:
    text = setup_text("sqlserver", spec)
    for needle in ("CREATE MASTER KEY ENCRYPTION BY PASSWORD = '<MASTER_KEY_PASSWORD>'", "CREATE CERTIFICATE",
                   "BACKUP CERTIFICATE", "WITH PRIVATE KEY", f"WITH ALGORITHM = {algorithm}",
                   "ENCRYPTION BY SERVER CERTIFICATE", "SET ENCRYPTION ON", "sys.dm_database_encryption_keys",
                   "IF @state = 3 BREAK;", "WAITFOR DELAY", "tempdb", "separate instance"):
        assert needle in text, needle


def test_sqlserver_plain_checks_the_instance() -> None:
    text = setup_text("sqlserver", "none")
    assert "no rows at all" in text and "tempdb" in text and "CREATE DATABASE ENCRYPTION KEY" not in text


@pytest.mark.parametrize("spec,algorithm", [("tde:aes-128", "AES128"), ("tde:aes-256", "AES256"),
                                            ("tde:3des", "3DES168")])
def test_oracle_steps(spec: str, algorithm: str) -> None:
    text = setup_text("oracle", spec)
    for needle in ("ADMINISTER KEY MANAGEMENT CREATE KEYSTORE", "SET KEYSTORE OPEN", "SET KEY IDENTIFIED BY",
                   "WITH BACKUP", f"ENCRYPTION USING '{algorithm}' ENCRYPT", "v$encrypted_tablespaces",
                   "v$encryption_wallet", "encrypt_new_tablespaces", '"<KEYSTORE_PASSWORD>"'):
        assert needle.lower() in text.lower(), needle


@pytest.mark.parametrize("spec,bits,mode", [("tde:aes-128-ctr", 128, "AES_CTR"), ("tde:aes-256", 256, "AES_CBC")])
def test_mariadb_steps(spec: str, bits: int, mode: str) -> None:
    text = setup_text("mariadb", spec)
    for needle in ("plugin_load_add = file_key_management", f"file_key_management_encryption_algorithm = {mode}",
                   f"openssl rand -hex {bits // 8}", "innodb_encrypt_tables = ON", "innodb_encryption_threads = ",
                   "INNODB_TABLESPACES_ENCRYPTION"):
        assert needle in text, needle


def test_the_encryption_threads_advised_are_the_measured_ones() -> None:
    """tde-setup advised 4 encryption threads where docs/workloads/encrypt.md measured 1 as faster and gentler on 2
    cores: the advice is the measured value, says where it was measured and how to measure one's own host."""
    text = setup_text("mariadb", "tde:aes-256-ctr")
    line = next(i for i, t in enumerate(text.splitlines()) if t.startswith("innodb_encryption_threads = "))
    lines = text.splitlines()
    assert lines[line] == "innodb_encryption_threads = 1"
    said = " ".join(lines[max(0, line - 4):line + 4])
    assert "measured" in said and "docs/workloads/encrypt.md" in said
    assert "--workload encrypt --workload-option threads=1,2,4" in said
    doc = (Path(__file__).resolve().parents[2] / "docs" / "workloads" / "encrypt.md").read_text()
    assert "**More threads did not help here.**" in doc and "1 thread is the\n  gentler choice" in doc


@pytest.mark.parametrize("engine,spec,match", [
    ("postgres", "tde:aes-256", "does not know engine"),
    ("sqlserver", "tde:aes-256-ctr", "no mode option"),
    ("oracle", "tde:aes-256-xts", "algorithm name only"),
    ("mariadb", "tde:aes-256-gcm", "AES_CBC or AES_CTR"),
    ("mysql", "sqlcipher:aes-256-cbc", "server's own TDE"),
    ("sqlserver", "tde:aes-256@tables", "unknown scope"),
    ("mysql", "tde:nonsense", "unknown cipher"),
])
def test_refusals(engine: str, spec: str, match: str) -> None:
    with pytest.raises(UsageError, match=match):
        setup_text(engine, spec)


@pytest.mark.parametrize("engine,spec", [("mysql", "tde:aes-256"), ("sqlserver", "tde:aes-256"),
                                         ("oracle", "tde:aes-256"), ("mariadb", "tde:aes-256-ctr"),
                                         ("mariadb", "none"), ("oracle", "none"), ("mysql", "none")])
def test_no_secret_is_ever_printed(engine: str, spec: str) -> None:
    text = setup_text(engine, spec)
    assert not re.search(r"\b[0-9a-fA-F]{32,}\b", text)
    assert not any(secret in text for secret in issued_secrets())
    for password in re.findall(r"PASSWORD = '([^']*)'|IDENTIFIED BY \"([^\"]*)\"", text):
        assert all(not p or (p.startswith("<") and p.endswith(">")) for p in password)


# the steps checked against the vendors' documentation --------------------------------------------

def _block(text: str, step: int) -> str:
    return text.split(f"Step {step}:")[1].split("Step ")[0]


def test_sqlserver_3des_sets_compatibility_level_120_before_the_key() -> None:
    text = setup_text("sqlserver", "tde:3des")
    step3 = _block(text, 3)
    assert "ALTER DATABASE <DATABASE> SET COMPATIBILITY_LEVEL = 120;" in step3
    assert step3.index("COMPATIBILITY_LEVEL = 120") < step3.index("CREATE DATABASE ENCRYPTION KEY")
    assert "SQL Server 2016 (13.x)" in text and "baseline database to 120 as well" in text
    assert "COMPATIBILITY_LEVEL = 120" not in setup_text("sqlserver", "tde:aes-256")
    assert "COMPATIBILITY_LEVEL = 120" in setup_text("sqlserver", "none")  # the 3DES baseline needs the same


def test_sqlserver_wait_loop_has_a_limit_and_state_1_is_no_progress() -> None:
    loop = _block(setup_text("sqlserver", "tde:aes-256"), 5)
    assert "@limit int = <MAX_WAIT_SECONDS>" in loop and "IF @waited >= @limit" in loop
    assert "SET @waited = @waited + 10;" in loop
    assert "NOT IN (2, 4, 6)" in loop and "(1, 2" not in loop
    assert "ENCRYPTION RESUME" in loop  # a suspended scan (2019+) is named


@pytest.mark.parametrize("spec", ["none", "tde:aes-256"])
def test_oracle_checks_tablespace_encryption_first(spec: str) -> None:
    text = setup_text("oracle", spec)
    assert "SHOW PARAMETER tablespace_encryption" in text and "19.16" in text
    assert "takes precedence over" in text and "AUTO_ENABLE" in text
    assert text.index("tablespace_encryption") < text.index("encrypt_new_tablespaces")


def test_mariadb_warns_about_pbkdf2_and_names_the_option_file() -> None:
    text = setup_text("mariadb", "tde:aes-256-ctr")
    keys = _block(text, 1)
    assert "-md sha1" in keys and "-pbkdf2" in keys and "Do NOT" in keys and "10.11" in keys
    assert "openssl enc -aes-256-cbc -md sha1 -pass file:keyfile.key" in keys  # the command itself has no -pbkdf2
    options = _block(text, 2)
    assert "/etc/mysql/mariadb.conf.d/99-encryption.cnf" in options and "[mariadb]" in options


@pytest.mark.parametrize("engine,grant", [
    ("mariadb", "GRANT PROCESS ON *.* TO '<TDEBENCH_USER>'@'<CLIENT_HOST>';"),
    ("mysql", "GRANT SELECT ON performance_schema.keyring_component_status"),
    ("sqlserver", "GRANT VIEW SERVER SECURITY STATE"),
    ("oracle", "GRANT SELECT_CATALOG_ROLE TO <TPCH_USER>;"),
])
def test_steps_end_with_the_grant_tdebench_needs(engine: str, grant: str) -> None:
    assert grant in setup_text(engine, "tde:aes-256")


# ------------------------------------------------------------------------------------------- CLI
@pytest.fixture()
def cli() -> Iterator[object]:
    """The real ``tdebench`` entry point with the manual commands registered (as app.py will)."""
    from tdebench.cli import app as app_module
    from tdebench.cli.manual import import_command, script_command, tde_setup_command

    before = list(app_module.app.registered_commands)
    names = {c.name for c in before}
    for name, func in (("script", script_command), ("import", import_command), ("tde-setup", tde_setup_command)):
        if name not in names:
            app_module.app.command(name)(func)
    yield app_module.main
    app_module.app.registered_commands[:] = before


def _exit(main, args: list[str]) -> int:  # noqa: ANN001
    with pytest.raises(SystemExit) as info:
        main(args)
    return int(info.value.code)


def test_cli_tde_setup(cli, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: ANN001
    assert _exit(cli, ["tde-setup", "--engine", "mysql", "--encryption", "tde:aes-256"]) == 0
    assert "[mysqld]" in capsys.readouterr().out  # printed as is, no rich markup
    assert _exit(cli, ["tde-setup", "--engine", "mysql", "--encryption", "tde:aes-128"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("tdebench: error: mysql cannot do 'tde:aes-128'")
    assert _exit(cli, ["tde-setup", "--engine", "db2", "--encryption", "tde:aes-256"]) == 2
    assert _exit(cli, ["tde-setup", "--engine", "oracle", "--encryption", "tde:bogus"]) == 2


def test_cli_script_and_import(cli, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:  # noqa: ANN001
    out = tmp_path / "scripts"
    assert _exit(cli, ["script", "--dialect", "tsql", "--test", "throughput", "--streams", "2", "--sf", "1",
                       "--out", str(out)]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["README.md", "stream01.sql", "stream02.sql"]
    run = tmp_path / "run"
    assert _exit(cli, ["import", "--dialect", "tsql", "--config", "plain", "--out", str(run), "--no-report",
                       str(LOGS / "sqlcmd_power_stream00.log")]) == 0
    assert "5 ok" in capsys.readouterr().out
    assert _exit(cli, ["import", "--dialect", "tsql", "--config", "tde", "--encryption", "tde:aes-256",
                       "--engine-version", "16.0", "--setting", "maxdop=1", "--out", str(run),
                       str(LOGS / "sqlcmd_power_stream00.log")]) == 0
    assert (run / "manifest.json").is_file()
    assert _exit(cli, ["import", "--dialect", "tsql", "--config", "tde", "--encryption", "tde:aes-128",
                       "--out", str(run), str(LOGS / "sqlcmd_power_stream00.log")]) == 2
    assert _exit(cli, ["script", "--dialect", "db2", "--out", str(out)]) == 2

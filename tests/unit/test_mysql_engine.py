"""The mysql engine without a MySQL server: binary detection, spec rules, configuration files."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tdebench.encryption import PLAIN, parse_spec
from tdebench.engines import get_engine
from tdebench.engines.mysql import engine as mysql_engine
from tdebench.engines.mysql import setup
from tdebench.errors import EnvironmentProblem, UsageError


def _fake_mysqld(directory: Path, banner: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "mysqld"
    path.write_text(f"#!/bin/sh\necho '{banner}'\n")
    path.chmod(0o755)
    return path


def test_mariadb_mysqld_is_not_mysql(tmp_path, monkeypatch):
    fake = _fake_mysqld(tmp_path / "sbin", "/usr/sbin/mysqld  Ver 10.11.19-MariaDB-0+deb12u1 for debian-linux-gnu")
    monkeypatch.setattr(mysql_engine, "SBIN", (fake.parent,))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(EnvironmentProblem) as err:
        get_engine("mysql").check_available()
    text = err.value.one_line()
    assert "no MySQL package exists for Debian 12" in text and "is MariaDB" in text
    assert "--target plain=mysql://" in text and "--engine mariadb" in text


def test_missing_mysqld(tmp_path, monkeypatch):
    monkeypatch.setattr(mysql_engine, "SBIN", (tmp_path,))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(EnvironmentProblem, match="no MySQL package exists for Debian 12"):
        get_engine("mysql").check_available()


def test_real_mysql_binary_is_found_and_versioned(tmp_path, monkeypatch):
    _fake_mysqld(tmp_path / "bin", "mysqld  Ver 8.4.3 for Linux on x86_64 (MySQL Community Server - GPL)")
    monkeypatch.setattr(mysql_engine, "SBIN", (tmp_path / "bin",))
    engine = get_engine("mysql")
    engine.check_available()
    assert engine.version() == "MySQL 8.4.3"
    _fake_mysqld(tmp_path / "old", "mysqld  Ver 8.0.19 for Linux on x86_64 (MySQL Community Server - GPL)")
    monkeypatch.setattr(mysql_engine, "SBIN", (tmp_path / "old",))
    with pytest.raises(EnvironmentProblem, match="8.0.24"):
        get_engine("mysql").check_available()


@pytest.mark.parametrize("text", ["tde:aes-128-cbc", "tde:aes-192-cbc", "tde:aes-128-ctr"])
def test_small_keys_rejected_with_mysqls_reason(text):
    with pytest.raises(UsageError) as err:
        get_engine("mysql").validate_spec(parse_spec(text))
    assert "single key size: AES-256" in err.value.one_line() and "tde:aes-256-cbc" in err.value.one_line()


def test_supported_specs():
    engine = get_engine("mysql")
    assert engine.supported_specs() == [PLAIN, parse_spec("tde:aes-256-cbc")]
    engine.validate_spec(parse_spec("tde:aes-256-cbc"))
    with pytest.raises(UsageError, match="CBC"):
        engine.validate_spec(parse_spec("tde:aes-256-ctr"))


def test_settings_managed_by_tdebench_are_refused():
    setup.validate_settings({"innodb_buffer_pool_size": "2G"})
    for key in ("default_table_encryption", "keyring_file_data", "datadir", "mysqlx_port"):
        with pytest.raises(UsageError, match="managed by tdebench"):
            setup.validate_settings({key: "x"})


def test_cnf_and_encryption_options():
    enc = setup.encryption_options(parse_spec("tde:aes-256-cbc"), binlog=False)
    assert enc["default_table_encryption"] == "ON" and enc["innodb_redo_log_encrypt"] == "ON"
    assert "binlog_encryption" not in enc and setup.encryption_options(PLAIN, binlog=True) == {}
    cnf = setup.render_cnf({"datadir": Path("/x/data")}, None, setup.merged({}), enc)
    assert cnf.startswith("[mysqld]\ndatadir=/x/data\n") and "skip_networking" in cnf and "\nskip_log_bin\n" in cnf
    assert "mysqlx=OFF" in cnf and "local_infile=ON" in cnf
    assert "port=4000" in setup.render_cnf({}, 4000, {}, {})


def test_keyring_files(tmp_path):
    manifest, config = setup.write_local_keyring_files(tmp_path, tmp_path / "keys" / "kr")
    assert json.loads(manifest.read_text()) == {"components": "file://component_keyring_file"}
    assert json.loads(config.read_text()) == {"path": str(tmp_path / "keys" / "kr"), "read_only": False}
    assert oct(os.stat(config).st_mode & 0o777) == "0o600"
    mysqld = _fake_mysqld(tmp_path / "bin", "x")
    plugins = tmp_path / "plugin"
    plugins.mkdir()
    (plugins / "component_keyring_file.so").write_text("")
    with pytest.raises(EnvironmentProblem) as err:
        setup.check_global_keyring_files(mysqld, plugins)
    assert str(tmp_path / "bin" / "mysqld.my") in err.value.one_line() and "read_local_config" in err.value.one_line()
    (tmp_path / "bin" / "mysqld.my").write_text(json.dumps(setup.GLOBAL_MANIFEST))
    (plugins / "component_keyring_file.cnf").write_text(json.dumps(setup.GLOBAL_CONFIG))
    setup.check_global_keyring_files(mysqld, plugins)


def test_parse_version():
    assert setup.parse_version("mysqld  Ver 8.0.36-0ubuntu0.22.04.1 for Linux") == (8, 0, 36)
    assert setup.parse_version("nothing") is None

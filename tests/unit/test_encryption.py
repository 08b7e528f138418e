"""Encryption-spec grammar and key handling."""

from __future__ import annotations

import os
import stat

import pytest

from tdebench.encryption import (PLAIN, SecretKey, generate_password, issued_secrets, parse_spec, parse_spec_list,
                                 redact, write_secret_file)
from tdebench.errors import UsageError


@pytest.mark.parametrize("text, bits, mode, label", [
    ("sqlcipher:aes-256-cbc", 256, "cbc", "sqlcipher-aes-256-cbc"),
    ("TDE:AES-128-CTR", 128, "ctr", "tde-aes-128-ctr"),
    ("tde:aes-192-cbc@tables", 192, "cbc", "tde-aes-192-cbc-tables"),
    ("column:aes-256", 256, None, "column-aes-256"),
    ("column:3des", 192, None, "column-3des"),
    ("column:pgp-aes128", 128, None, "column-pgp-aes128"),
    ("fs:gocryptfs", None, None, "fs-gocryptfs"),
    ("fs:gocryptfs-xchacha", None, None, "fs-gocryptfs-xchacha"),
])
def test_parse_valid_specs(text, bits, mode, label):
    spec = parse_spec(text)
    assert spec.key_bits == bits
    assert spec.mode == mode
    assert spec.label == label
    assert parse_spec(str(spec)) == spec  # print/parse round trip
    assert not spec.is_plain


def test_none_and_plain_are_the_baseline():
    assert parse_spec("none") == PLAIN == parse_spec(" Plain ")
    assert PLAIN.is_plain and str(PLAIN) == "none" and PLAIN.label == "none"


@pytest.mark.parametrize("text, fragment", [
    ("aes-256", "unknown encryption spec"),
    ("tde:aes-512-cbc", "unknown cipher"),
    ("tde:aes-256-ofb", "unknown cipher"),
    ("disk:aes-256", "unknown encryption spec"),
    ("tde:aes-256-cbc@", "bad scope"),
    ("tde:aes-256-cbc@Bad Scope", "bad scope"),
])
def test_parse_rejects_bad_specs_with_a_fix(text, fragment):
    with pytest.raises(UsageError) as err:
        parse_spec(text)
    assert fragment in err.value.one_line()
    assert "fix:" in err.value.one_line()
    assert "\n" not in err.value.one_line()


def test_spec_list_rejects_duplicates_and_empty():
    assert [str(s) for s in parse_spec_list("none, sqlcipher:aes-256-cbc")] == ["none", "sqlcipher:aes-256-cbc"]
    with pytest.raises(UsageError, match="twice"):
        parse_spec_list("none,sqlcipher:aes-256-cbc,sqlcipher:aes-256-cbc")
    # an A/A test: two identical plain twins
    assert [str(s) for s in parse_spec_list("none,plain")] == ["none", "none"]
    with pytest.raises(UsageError, match="empty"):
        parse_spec_list(" , ")


def test_keys_are_random_and_never_shown():
    a, b = SecretKey.generate(256), SecretKey.generate(256)
    assert a.hex() != b.hex() and len(a.hex()) == 64 and a.bits == 256
    assert a.hex() not in repr(a) and a.hex() not in str(a) and a.hex() not in f"{a}"
    assert a.hex() in issued_secrets()
    with pytest.raises(ValueError):
        SecretKey.generate(100)


def test_redact_scrubs_keys_and_passwords():
    key, password = SecretKey.generate(128), generate_password()
    text = f"key {key.hex()} and {key.hex().upper()} and password {password}"
    cleaned = redact(text)
    assert key.hex() not in cleaned and key.hex().upper() not in cleaned and password not in cleaned
    assert cleaned.count("***") == 3


def test_secret_files_are_0600_in_0700_dirs(tmp_path):
    path = write_secret_file(tmp_path / "keys" / "key.txt", "secret")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(path.parent).st_mode) == 0o700

"""Cipher speed table, the cipher floor, spec mapping, the JSON file and `tdebench ciphers`."""

from __future__ import annotations

import json

import pytest
import typer
from typer.testing import CliRunner

from tdebench.cli.ciphers import ciphers_command
from tdebench.encryption import parse_spec
from tdebench.errors import UsageError
from tdebench.measure.cipherspeed import (
    DECRYPT, ENCRYPT, MAC, CipherSpeed, cipher_floor_seconds, cipher_for_spec, cipher_names, floor_for_spec,
    load_table, lookup, measure_ciphers, save_table, speed_for_spec,
)

EXPECTED = {
    "AES-128-CBC", "AES-192-CBC", "AES-256-CBC", "AES-128-CTR", "AES-192-CTR", "AES-256-CTR", "AES-128-GCM",
    "AES-192-GCM", "AES-256-GCM", "AES-128-XTS", "AES-256-XTS", "3DES-CBC", "ChaCha20-Poly1305", "AES-SIV-512",
    "HMAC-SHA512",
}


@pytest.fixture(scope="module")
def table() -> list[CipherSpeed]:
    """The real table of this machine, on a short budget (about 1 s in all)."""
    return measure_ciphers(seconds_each=0.03)


def test_table_has_every_cipher_and_direction(table):
    assert set(cipher_names()) == EXPECTED
    keys = {(s.name, s.operation) for s in table}
    for name in EXPECTED - {"HMAC-SHA512"}:
        assert (name, ENCRYPT) in keys and (name, DECRYPT) in keys, name
    assert ("HMAC-SHA512", MAC) in keys
    assert len(table) == len(keys) == 2 * (len(EXPECTED) - 1) + 1
    for speed in table:
        assert speed.block_bytes == 16384
        assert speed.bytes_per_second > 1e6, speed  # even 3DES does more than 1 MB/s
        assert len(speed.samples) == 5 and min(speed.samples) <= speed.bytes_per_second <= max(speed.samples)
        assert speed.mib_per_second == pytest.approx(speed.bytes_per_second / 1024**2)
        assert speed.gb_per_second == pytest.approx(speed.bytes_per_second / 1e9)


def test_3des_is_at_least_ten_times_slower_than_aes_ctr(table):
    for operation in (ENCRYPT, DECRYPT):
        des = lookup(table, "3DES-CBC", operation).bytes_per_second
        for aes in ("AES-128-CTR", "AES-256-CTR"):
            ctr = lookup(table, aes, operation).bytes_per_second
            assert ctr >= 10 * des, f"{aes} {operation} {ctr / 1e6:.0f} MB/s vs 3DES {des / 1e6:.1f} MB/s"


def test_cbc_encrypt_is_slower_than_cbc_decrypt(table):
    # CBC encryption is serial, decryption parallel: the reason CBC writes cost more than reads
    enc = lookup(table, "AES-256-CBC", ENCRYPT).bytes_per_second
    dec = lookup(table, "AES-256-CBC", DECRYPT).bytes_per_second
    assert dec > 1.5 * enc


def test_cipher_floor_arithmetic():
    assert cipher_floor_seconds(2_000_000_000, 500_000_000, 4e9, 1e9) == pytest.approx(0.5 + 0.5)
    assert cipher_floor_seconds(0, 0, 1e9, 1e9) == 0
    assert cipher_floor_seconds(16384, 0, 16384, 1.0) == pytest.approx(1.0)
    with pytest.raises(ValueError):
        cipher_floor_seconds(-1, 0, 1e9, 1e9)
    with pytest.raises(ValueError):
        cipher_floor_seconds(1, 1, 0, 1e9)


def _fake_table() -> list[CipherSpeed]:
    rows = []
    for i, name in enumerate(sorted(EXPECTED - {"HMAC-SHA512"})):
        rows.append(CipherSpeed(name, ENCRYPT, 1e9 * (i + 1), 16384))
        rows.append(CipherSpeed(name, DECRYPT, 2e9 * (i + 1), 16384))
    rows.append(CipherSpeed("HMAC-SHA512", MAC, 1e9, 16384))
    return rows


@pytest.mark.parametrize("spec, cipher, exact", [
    ("sqlcipher:aes-256-cbc", "AES-256-CBC", True),
    ("tde:aes-128-ctr", "AES-128-CTR", True),
    ("tde:aes-192-ctr", "AES-192-CTR", True),
    ("tde:aes-256-cbc@tables", "AES-256-CBC", True),
    ("tde:aes-256-xts", "AES-256-XTS", True),
    ("column:aes-192", "AES-192-CBC", True),
    ("column:3des", "3DES-CBC", True),
    ("column:pgp-aes256", "AES-256-CBC", False),
    ("column:pgp-3des", "3DES-CBC", False),
    ("fs:gocryptfs", "AES-256-GCM", True),
    ("fs:gocryptfs-xchacha", "ChaCha20-Poly1305", False),
    ("fs:gocryptfs-aessiv", "AES-SIV-512", False),
])
def test_spec_maps_to_measured_cipher(spec, cipher, exact):
    table = _fake_table()
    mapping = cipher_for_spec(parse_spec(spec))
    assert mapping.name == cipher and mapping.exact == exact
    if not exact:
        assert mapping.note
    encrypt_bps, decrypt_bps = speed_for_spec(parse_spec(spec), table)
    assert encrypt_bps == lookup(table, cipher, ENCRYPT).bytes_per_second
    assert decrypt_bps == lookup(table, cipher, DECRYPT).bytes_per_second


def test_spec_mapping_edges():
    table = _fake_table()
    assert speed_for_spec(parse_spec("none"), table) is None
    assert speed_for_spec("tde:aes-128-ctr", []) is None  # not measured
    assert "CFB" in cipher_for_spec("column:pgp-aes128").note
    # SQLCipher's HMAC-SHA512 folded in on request: 1/speed = 1/cipher + 1/mac
    enc, dec = speed_for_spec("sqlcipher:aes-256-cbc", table)
    enc_mac, dec_mac = speed_for_spec("sqlcipher:aes-256-cbc", table, include_mac=True)
    assert enc_mac == pytest.approx(1 / (1 / enc + 1 / 1e9)) and dec_mac == pytest.approx(1 / (1 / dec + 1 / 1e9))
    assert speed_for_spec("tde:aes-256-cbc", table, include_mac=True) == speed_for_spec("tde:aes-256-cbc", table)
    enc, dec = speed_for_spec("tde:aes-128-ctr", table)
    assert floor_for_spec("tde:aes-128-ctr", table, 10**9, 10**8) == pytest.approx(1e9 / dec + 1e8 / enc)
    assert floor_for_spec("none", table, 10**9, 10**8) is None


def test_save_and_load_round_trip(tmp_path, table):
    path = save_table(tmp_path / "run" / "ciphers.json", table, seconds_each=0.03)
    data = json.loads(path.read_text())
    assert data["format"] == "tdebench-ciphers" and data["block_bytes"] == 16384 and "aes_ni" in data
    assert "openssl" in data and data["seconds_each"] == 0.03
    loaded = load_table(path)
    assert [(s.name, s.operation) for s in loaded] == [(s.name, s.operation) for s in table]
    assert loaded[0].bytes_per_second == pytest.approx(table[0].bytes_per_second)
    (tmp_path / "bad.json").write_text('{"format": "other"}')
    with pytest.raises(UsageError):
        load_table(tmp_path / "bad.json")
    with pytest.raises(UsageError):
        load_table(tmp_path / "missing.json")


@pytest.mark.parametrize("kwargs", [{"seconds_each": 0}, {"seconds_each": -1}, {"seconds_each": float("nan")},
                                    {"block_bytes": 15}, {"block_bytes": 0}, {"names": ["ROT13"]}])
def test_bad_arguments_are_usage_errors(kwargs):
    with pytest.raises(UsageError) as info:
        measure_ciphers(**kwargs)
    assert info.value.fix


def test_per_call_overhead_is_taken_out_of_stream_ciphers_only(table):
    for speed in table:
        if speed.name in ("ChaCha20-Poly1305", "AES-SIV-512"):
            assert speed.overhead_ns == 0  # nonce, key setup and tag are real work per sealed block
        else:
            per_call_ns = speed.block_bytes / speed.bytes_per_second * 1e9
            assert 0 <= speed.overhead_ns <= per_call_ns  # at most half of the raw call
    raw = measure_ciphers(seconds_each=0.01, names=["AES-128-CTR"], correct_overhead=False)
    assert all(s.overhead_ns == 0 for s in raw)


def test_only_some_ciphers():
    speeds = measure_ciphers(seconds_each=0.01, names=["aes-256-ctr"], block_bytes=4096)
    assert [(s.name, s.operation, s.block_bytes) for s in speeds] == [
        ("AES-256-CTR", ENCRYPT, 4096), ("AES-256-CTR", DECRYPT, 4096)]


@pytest.mark.parametrize("seconds", [0.0, -0.5, float("inf")])
def test_cli_rejects_bad_seconds(seconds):
    with pytest.raises(UsageError) as info:
        ciphers_command(seconds=seconds)
    assert "--seconds" in info.value.problem and info.value.fix


def test_cli_prints_json_and_table(tmp_path, table, monkeypatch):
    calls = []

    def measured(seconds, block_bytes, progress=None):  # the module's real table: measure once per test run
        calls.append((seconds, block_bytes))
        progress(1, 1)
        return table

    monkeypatch.setattr("tdebench.measure.cipherspeed.measure_ciphers", measured)
    app = typer.Typer()
    app.command("ciphers")(ciphers_command)
    app.command("other")(lambda: None)  # two commands, so "ciphers" is a sub-command as in tdebench
    result = CliRunner().invoke(app, ["ciphers", "--seconds", "0.01", "--json", "--out", str(tmp_path / "c.json")])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert {e["name"] for e in data["entries"]} == EXPECTED
    assert isinstance(data["aes_ni"], (bool, type(None)))
    assert load_table(tmp_path / "c.json")
    result = CliRunner().invoke(app, ["ciphers", "--seconds", "0.01"])
    assert result.exit_code == 0, result.output
    assert "3DES-CBC" in result.stdout and "AES-NI" in result.stdout and "vs AES-256-CTR" in result.stdout
    assert calls == [(0.01, 16384), (0.01, 16384)]


def test_cli_defaults_match_the_library():
    from tdebench.cli import ciphers as cli
    from tdebench.measure import cipherspeed as lib

    assert (cli.DEFAULT_SECONDS, cli.DEFAULT_BLOCK, cli.REFERENCE) == (lib.DEFAULT_SECONDS, lib.DEFAULT_BLOCK, lib.REFERENCE)

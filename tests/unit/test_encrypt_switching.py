"""Switching, honestly shown: intervals below 3 trials are "not resolved"; the per-mechanism costs a decision reads
back from a run directory (online switch time and impact, the restart it needs, or the offline downtime, extra
disk and copy rate, and the old copy's plaintext); refused engine and spec pairs name only pairs that can; the
``tde-setup`` steps for filesystem encryption. Real servers: tests/e2e/test_encrypt_fs.py."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tdebench.encryption import issued_secrets, parse_spec
from tdebench.engines import engine_names, get_engine
from tdebench.engines.mariadb.counters import to_counters
from tdebench.errors import UsageError
from tdebench.manual.tde_steps import setup_text
from tdebench.report.encrypt_view import ratio_text, verdict_lines
from tdebench.stats.paired import paired_ratio
from tdebench.stats.switching import SwitchRow, mechanism_costs
from tdebench.workloads.encrypt.options import parse_options, switchable_pairs

from tests.unit.test_one_number import write_encrypt_run


def test_ratios_of_fewer_than_three_trials_are_not_resolved():
    two = paired_ratio([100.0, 100.0], [50.0, 160.0])
    assert two is not None and two.low is not None  # an interval exists (0.07-8.9 wide), but says nothing
    assert ratio_text(two) == f"{two.mean:.2f}× (not resolved)" and "[" not in ratio_text(two)
    three = paired_ratio([100.0] * 3, [50.0, 55.0, 60.0])
    assert re.fullmatch(r"0\.55× \[0\.\d\d, 0\.\d\d\]", ratio_text(three))


def test_the_verdict_of_two_trials_says_not_resolved_and_how_many():
    row = SwitchRow("mariadb-tde", "t1", "on", 2, 0.619, None, None, 3000.0, paired_ratio([1.0, 1.0], [0.5, 1.3]),
                    paired_ratio([1.0, 1.0], [1.5, 2.0]), None, 0.3, 0, 0)
    line = verdict_lines([row])[0]
    assert "switched on in 619 ms (median of 2 trials)" in line
    assert "TPM meanwhile 0.81× (not resolved) of just before" in line and "[" not in line


def test_mechanism_costs_read_back_from_a_run_directory(tmp_path: Path):
    run = tmp_path / "run"
    write_encrypt_run(run)
    costs = {c.config: c for c in mechanism_costs(run)}
    tde, fs, sqlcipher = (costs["mariadb-tde-aes-256-ctr"], costs["mariadb-fs-fscrypt"],
                          costs["sqlite-sqlcipher-aes-256-cbc"])
    assert tde.online and tde.resolved and tde.trials == 3
    assert tde.downtime_s == tde.restart_s and tde.restart_s and tde.restart_back_s  # the restarts are its downtime
    assert tde.tpm_during is not None and tde.tpm_during.mean < 1 and tde.peak_extra_disk_bytes is None
    assert not fs.online and fs.downtime_s == fs.time_to_done_s and fs.peak_extra_disk_bytes
    assert fs.copy_bytes_per_s and fs.old_copy_plaintext == 40008 and fs.plaintext_left == 0
    assert fs.tpm_during is None and fs.restart_s is None
    assert not sqlcipher.online and sqlcipher.copy_bytes_per_s is None and sqlcipher.old_copy_plaintext is None
    assert {r.action for r in tde.rows} == {"restart_on", "on", "rekey", "off", "restart_off"}


def test_redo_bytes_count_as_encrypted_only_when_the_server_encrypts_its_redo_log():
    values = {"Innodb_os_log_written": 1000, "Innodb_num_pages_encrypted": 0, "Innodb_num_pages_decrypted": 0}
    assert to_counters(values, 16384, 0, False)["bytes_encrypted"] == 0  # a server started plaintext
    assert to_counters(values, 16384, 0, True)["bytes_encrypted"] == 1000


def test_mariadb_switches_tde_online_after_a_restart_and_fs_offline_by_a_copy():
    mariadb, galera = get_engine("mariadb"), get_engine("galera")
    tde = mariadb.switch_method(parse_spec("tde:aes-256-ctr"))
    assert tde is not None and tde.online and tde.restart and tde.rekey and not tde.copies
    for spec in ("fs:fscrypt", "fs:gocryptfs"):
        fs = mariadb.switch_method(parse_spec(spec))
        assert fs is not None and not fs.online and fs.copies and fs.whole_server and not fs.rekey
    cluster = galera.switch_method(parse_spec("tde:aes-256-ctr"))
    assert cluster is not None and cluster.online and not cluster.restart
    assert galera.switch_method(parse_spec("fs:fscrypt")) is None


def test_the_pairs_that_can_switch_never_list_a_refused_pair():
    """Each engine with the specs it can switch: the one just refused is never among them (it was: "engine
    'mariadb' cannot switch ... 'fs:fscrypt'; fix: use ... mariadb")."""
    listed = switchable_pairs(lambda m: True)
    assert "mariadb with tde:* or fs:*" in listed and "galera with tde:*" in listed
    for name in engine_names():
        engine = get_engine(name)
        for spec in engine.supported_specs():
            if not spec.is_plain and engine.switch_method(spec) is None:
                mine = next((p for p in listed.split("; ") if p.startswith(f"{name} with ")), "")
                assert f"{spec.mechanism}:*" not in mine and str(spec) not in mine, (name, spec, mine)
    assert "mariadb with tde:*" in switchable_pairs(lambda m: m.online)
    assert "fs:" not in switchable_pairs(lambda m: m.online)


@pytest.mark.parametrize("engine, spec, options, words", [
    ("sqlite", "fs:fscrypt", {}, "engine 'sqlite' cannot switch encryption on in place (the encrypt workload) for "
                                 "'fs:fscrypt'"),
    ("galera", "fs:fscrypt", {}, "engine 'galera' cannot switch"),
    ("mariadb", "fs:gocryptfs", {"method": "online"}, "cannot switch 'fs:gocryptfs' on in place while serving"),
    ("mariadb", "fs:fscrypt", {"rekey": "yes"}, "cannot re-key existing data under 'fs:fscrypt'"),
    ("mariadb", "fs:fscrypt", {"threads": "2"}, "encrypts offline by one statement"),
    ("mariadb", "fs:fscrypt", {"iops": "100"}, "with no page rate to set"),
    ("mariadb", "tde:aes-256-ctr", {"method": "offline"}, "has no offline method"),
])
def test_refused_pairs_and_options_name_what_can(engine, spec, options, words):
    from tdebench.engines import Config

    config = Config(engine, parse_spec(spec), {})
    with pytest.raises(UsageError) as info:
        parse_options(options).check_configs([config])
    text = info.value.one_line()
    assert words in text and "fix:" in text, text
    pairs = text.partition("fix:")[2]
    assert f"{engine} with {spec.split(':')[0]}" not in pairs, text  # never the pair just refused


def test_tde_setup_moves_a_data_directory_into_fscrypt_and_gocryptfs():
    fscrypt = setup_text("mariadb", "fs:fscrypt")
    for needle in ("tune2fs -O encrypt", "fscrypt encrypt <NEW_DATADIR>", "systemctl stop mariadb",
                   "cp -a <DATADIR>/. <NEW_DATADIR>/", "datadir = <NEW_DATADIR>", "rm -rf <DATADIR>",
                   "frees its blocks without overwriting them", "fscrypt unlock", "Measured here",
                   "--workload encrypt", "the service was down"):
        assert needle in fscrypt, needle
    gocryptfs = setup_text("mysql", "fs:gocryptfs")
    for needle in ("gocryptfs -init", "sudo -u mysql cp -a", "[mysqld]", "systemctl stop mysql", "no -allow_other",
                   "Requires=<GOCRYPTFS_UNIT>"):
        assert needle in gocryptfs, needle
    for text in (fscrypt, gocryptfs):
        assert not re.search(r"\b[0-9a-fA-F]{32,}\b", text)
        assert not any(secret in text for secret in issued_secrets())


@pytest.mark.parametrize("engine, spec, match", [("oracle", "fs:gocryptfs", "mariadb, mysql"),
                                                  ("mariadb", "fs:fscrypt@tables", "has no scope"),
                                                  ("mysql", "column:aes-256", "TDE and filesystem encryption")])
def test_tde_setup_refuses_fs_where_it_does_not_apply(engine, spec, match):
    with pytest.raises(UsageError, match=match):
        setup_text(engine, spec)

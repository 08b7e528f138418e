"""SQLCipher's offline switch on a real file: sqlcipher_export encrypts a plaintext database, PRAGMA rekey puts it
under a new key (the old one no longer opens it), and the way back gives the plaintext file with every row."""

from __future__ import annotations

import sqlcipher3
import pytest

from tdebench.encryption import PLAIN, parse_spec
from tdebench.engines import Config, get_engine


@pytest.fixture
def instance(tmp_path):
    engine = get_engine("sqlite")
    inst = engine.create_instance(Config("sqlite", parse_spec("sqlcipher:aes-256-cbc"), engine.default_settings()),
                                  tmp_path)
    inst.start()
    inst.switcher().start_plain()
    conn = inst.connect()
    conn.execute("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)")
    conn.executemany("INSERT INTO t VALUES (?, ?)", [(i, f"ORIGINAL-{i}") for i in range(3000)])
    conn.close()
    yield inst
    inst.destroy()


def rows(inst) -> int:
    conn = inst.connect()
    try:
        return conn.execute("SELECT count(*) FROM t WHERE v LIKE 'ORIGINAL-%'").fetchone()[0]
    finally:
        conn.close()


def opens_with(path, key_hex: str | None) -> bool:
    conn = sqlcipher3.connect(str(path))
    try:
        if key_hex:
            conn.execute(f"PRAGMA key = \"x'{key_hex}'\"")
        conn.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return True
    except sqlcipher3.DatabaseError:
        return False
    finally:
        conn.close()


def test_on_rekey_off(instance):
    path, stages, switcher = instance.path, [], instance.switcher()
    assert switcher.progress(on=False).done and b"ORIGINAL-" in path.read_bytes()
    switcher.switch(True, stages.append)
    assert stages == ["export", "swap"] and not list(path.parent.glob("*.switch"))
    assert switcher.progress(on=True).done and not switcher.progress(on=False).done
    assert b"ORIGINAL-" not in path.read_bytes() and not opens_with(path, None) and rows(instance) == 3000
    old = instance._active.hex()
    assert opens_with(path, old)
    switcher.rekey(stages.append)
    assert not opens_with(path, old) and opens_with(path, instance._active.hex()) and rows(instance) == 3000
    switcher.switch(False, stages.append)
    assert switcher.progress(on=False).done and opens_with(path, None) and rows(instance) == 3000


def test_only_sqlcipher_switches(tmp_path):
    engine = get_engine("sqlite")
    method = engine.switch_method(parse_spec("sqlcipher:aes-256-cbc"))
    assert method is not None and not method.online and method.rekey and not method.copies
    assert engine.switch_method(PLAIN) is None and engine.switch_method(parse_spec("fs:fscrypt")) is None
    assert engine.create_instance(Config("sqlite", PLAIN, engine.default_settings()), tmp_path).switcher() is None

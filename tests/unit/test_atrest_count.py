"""Counting needles in a file at rest (verify/atrest.py, engines/toolkit/exposure.py): chunks of the file are read
with the bytes a needle across their boundary needs, a needle is counted once, and windows of zeros are skipped
unless a needle is itself zeros."""

from __future__ import annotations

import random

from tdebench.engines.toolkit import exposure
from tdebench.verify.atrest import count_in_file, scan_directory_for


def test_counts_equal_a_whole_file_count_across_chunk_boundaries(tmp_path, monkeypatch):
    monkeypatch.setattr(exposure, "_CHUNK", 64)
    rng = random.Random(7)
    needles = [b"NEEDLE", b"CANARY-0123", b"ab"]
    data = bytearray(b"\0" * 700)  # zeros: whole windows of them are skipped
    for _ in range(60):
        at = rng.randrange(0, 4000)
        data[at:at] = rng.choice(needles) + bytes(rng.randrange(0, 9))
    data += b"\0" * 300 + b"NEEDLE"  # after a window of zeros
    path = tmp_path / "f"
    path.write_bytes(bytes(data))
    assert count_in_file(path, needles) == {n.decode(): bytes(data).count(n) for n in needles}


def test_a_needle_of_zeros_turns_the_zero_skip_off(tmp_path, monkeypatch):
    monkeypatch.setattr(exposure, "_CHUNK", 16)
    path = tmp_path / "f"
    path.write_bytes(b"\0" * 100)
    assert count_in_file(path, [b"\0\0\0\0"]) == {"\0\0\0\0": 25}


def test_one_pass_gives_each_marker_set_its_own_result(tmp_path):
    (tmp_path / "a").write_bytes(b"xx CANARY-1 yy Customer#1 Customer#1")
    (tmp_path / "b").write_bytes(b"nothing")
    canary, known = scan_directory_for(tmp_path, ["CANARY-1"], ["Customer#1"])
    assert [(f.path, f.hits) for f in canary.files] == [("a", {"CANARY-1": 1}), ("b", {})]
    assert [(f.path, f.hits) for f in known.files] == [("a", {"Customer#1": 2}), ("b", {})]
    empty = scan_directory_for(tmp_path, ["CANARY-1"], [])[1]
    assert empty.files == []  # no known plaintext: nothing scanned for it, no file listed

"""Counting needles in a tar stream packed as another user (verify/live_scan.py): the live-host row's reading of a
mount that admits only the server's OS user."""

from __future__ import annotations

import io

from tdebench.verify import live_scan


def test_matches_across_chunks_count_once(monkeypatch):
    monkeypatch.setattr(live_scan, "_CHUNK", 7)
    data = b"xxNEEDLExxxxNEEDLENEEDLExNEEDL"  # three whole ones, the last cut off
    size, counts = live_scan.count_stream(io.BytesIO(data).read, [b"NEEDLE", b"x"])
    assert size == len(data) and counts == {"NEEDLE": 3, "x": data.count(b"x")}


def test_a_tree_is_read_through_tar(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "a.ibd").write_bytes(b"\0" * 5000 + b"CANARY-1" + b"\0" * 5000 + b"CANARY-1")
    (tmp_path / "b").write_bytes(b"nothing here")
    (tmp_path / "link").symlink_to(tmp_path / "b")
    found = {name: (size, counts) for name, size, counts in live_scan.scan_tree_as(None, tmp_path, [b"CANARY-1"])}
    assert found == {"sub/a.ibd": (10016, {"CANARY-1": 2}), "b": (12, {"CANARY-1": 0})}

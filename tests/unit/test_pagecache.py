"""The page cache's refill and its folio probe (pagecache.py), on real files."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tdebench.engines.toolkit import memcap, pagecache
from tests.benchscripts import load

SIZE = 16 << 20

needs_root = pytest.mark.skipif(os.geteuid() != 0 or not os.access("/proc/kpageflags", os.R_OK),
                                reason="the folio probe reads /proc/kpageflags (root)")


def _file(path: Path) -> Path:
    path.write_bytes(os.urandom(SIZE))
    return path


@needs_root
def test_refill_reads_every_file_back_and_says_how_it_is_laid_out(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    _file(data / "a.ibd")
    memcap.evict_files(data)
    facts = pagecache.refill(tmp_path, data)
    assert facts["page_cache_refilled_bytes"] == SIZE
    assert 0.0 <= facts["page_cache_large_folio_share"] <= 1.0


@needs_root
def test_the_probe_tells_a_file_read_in_sequentially_from_one_read_in_page_by_page(tmp_path: Path) -> None:
    one, other = tmp_path / "one", tmp_path / "other"
    one.mkdir()
    other.mkdir()
    _file(one / "f")
    _file(other / "f")
    memcap.evict_files(tmp_path)
    memcap.cache_files(one)
    load("page_cache_layout").cache_page_by_page(other / "f", SIZE)
    sequential, scattered = pagecache.large_folio_share(one), pagecache.large_folio_share(other)
    assert sequential is not None and scattered is not None
    if sequential == 0:
        pytest.skip("this kernel caches ext4 files in single pages only (large folios since Linux 6.11)")
    assert scattered < sequential / 2, (sequential, scattered)


def test_the_probe_has_nothing_to_say_of_an_empty_directory(tmp_path: Path) -> None:
    assert pagecache.large_folio_share(tmp_path) is None


def test_twins_are_filled_together_each_with_all_of_its_own_files(tmp_path: Path) -> None:
    sets = []
    for twin, files in (("one", 3), ("other", 1)):
        data = tmp_path / twin / "data"
        data.mkdir(parents=True)
        for i in range(files):
            (data / f"t{i}.ibd").write_bytes(os.urandom((1 << 20) + 5))  # not a whole number of chunks
        sets.append((tmp_path / twin, data))
    filled = pagecache.refill_together(sets)
    assert [f["page_cache_refilled_bytes"] for f in filled] == [3 * ((1 << 20) + 5), (1 << 20) + 5]

"""The memory regime of a run in a DBA's words (report/regime_view.py): the words and figures for a run without a
memory ratio, at a ratio with misses from the disk and from the OS page cache; and, on a real SQLite run at one
ratio, the same sentence in the terminal, summary.md and index.html."""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tdebench.engines.duckdb.engine import DuckdbCache
from tdebench.engines.mariadb.memory import BufferPoolSize
from tdebench.engines.postgres.counters import SharedBuffers
from tdebench.engines.toolkit.sqlitefile import SqliteCache
from tdebench.report.counters_view import CounterIndex
from tdebench.report.fmt import fmt_bytes
from tdebench.report.regime_view import fraction_words, ratio_sentence, regime_sentences
from tdebench.stats.load import parse_rows

MIB = 1024 ** 2
GIB = 1024 ** 3
ROOT = Path(__file__).resolve().parents[2]


def _no_counters() -> CounterIndex:
    return CounterIndex(parse_rows([]))


def _swept(ratio: float, source: str, data: int = 164 * MIB) -> dict[str, Any]:
    labels = [f"e-none@mem{ratio:g}", f"e-tde@mem{ratio:g}"]
    return {"plan": {"cache": "warm", "memory_ratios": [ratio]},
            "memory": {"ratios": [ratio], "data_bytes": {"e": data},
                       "regimes": {label: {"memory_ratio": ratio, "data_bytes": data, "cache_bytes": int(ratio * data),
                                           "page_source": source} for label in labels}}}


def test_a_ratio_with_misses_from_the_disk_says_what_share_the_cache_held_and_that_misses_are_disk_reads() -> None:
    [text] = regime_sentences(_swept(0.25, "disk"), _no_counters(), ["e-none@mem0.25", "e-tde@mem0.25"],
                              "e-none@mem0.25", "total")
    assert text.startswith(f"The cache held 25% of the loaded data ({fmt_bytes(41 * MIB)} of {fmt_bytes(164 * MIB)})")
    assert "were read from the disk" in text and "RAM is about a quarter of its data" in text
    assert "every miss is a disk read" in text and "OS page cache" not in text


def test_a_ratio_with_misses_from_the_disk_says_how_long_a_read_waited() -> None:
    manifest = {**_swept(0.25, "disk"), "common_wait_per_read_s": {"0.25": {"1": 45e-6, "2": 47.5e-6, "3": 46e-6}}}
    [text] = regime_sentences(manifest, _no_counters(), ["e-none@mem0.25", "e-tde@mem0.25"], "e-none@mem0.25", "total")
    assert "Each of those reads waited 46.2 µs on average (the twins' common wait; blocks from 45.0 to 47.5 µs)" in text
    assert "the CPU work of decrypting is a larger share" in text
    [other] = regime_sentences({**manifest, "common_wait_per_read_s": {"0.5": {"1": 1e-4}}}, _no_counters(),
                               ["e-none@mem0.25", "e-tde@mem0.25"], "e-none@mem0.25", "total")
    assert "waited" not in other  # another ratio's waits are not this one's


def test_a_ratio_with_misses_from_memory_says_the_disk_was_not_waited_for() -> None:
    [text] = regime_sentences(_swept(0.3, "memory"), _no_counters(), ["e-none@mem0.3", "e-tde@mem0.3"],
                              "e-none@mem0.3", "total")
    cache = fmt_bytes(int(0.3 * 164 * MIB))
    assert text.startswith(f"The cache held 30% of the loaded data ({cache} of {fmt_bytes(164 * MIB)})")
    assert "came from the OS page cache, not the disk" in text and "without the disk's wait" in text
    assert "smaller in proportion" in text and "read from the disk" not in text


def test_a_sweep_gets_one_sentence_per_ratio_in_the_order_run_and_a_ratio_above_one_holds_everything() -> None:
    manifest = _swept(0.05, "disk", 100 * MIB)
    manifest["memory"]["regimes"]["e-none@mem2"] = {"memory_ratio": 2, "data_bytes": 100 * MIB,
                                                   "cache_bytes": 200 * MIB, "page_source": "disk"}
    small, large = regime_sentences(manifest, _no_counters(), ["e-none@mem0.05", "e-tde@mem0.05", "e-none@mem2"],
                                    "e-none@mem0.05", "total")
    assert small.startswith("The cache held 5% of the loaded data (5.0 MiB of 100.0 MiB)") and "about 5% of" in small
    assert large.startswith("The cache was 2 times the loaded data (200.0 MiB of 100.0 MiB), so every page fitted")
    assert "decrypted once, when it is read from disk" in large


def _unswept(cache: str, hits: tuple[int, int] | None) -> tuple[dict[str, Any], CounterIndex]:
    manifest = {"plan": {"cache": cache},
                "configs": [{"label": "e-none", "encryption": "none", "storage_bytes": 200 * MIB, "cache_bytes": GIB,
                             "storage": {"totals": {"total_bytes": 164 * MIB}}},
                            {"label": "e-tde", "encryption": "tde", "storage_bytes": 210 * MIB}]}
    rows = [{"engine": "e", "config": "e-none", "encryption": "none", "workload": "w", "test": "counters",
             "step": "total", "metric": metric, "value": str(value), "unit": "pages", "block": "1", "status": "ok"}
            for metric, value in zip(("cache_requests", "cache_misses"), hits or ())]
    return manifest, CounterIndex(parse_rows(rows))


@pytest.mark.parametrize(("hits", "says", "figures"), [
    ((10000, 0), "Every page was in the database's cache", "(data 164.0 MiB, cache 1.0 GiB, cache hit ratio 100%)"),
    ((10000, 80), "Nearly every page was in the database's cache",
     "(data 164.0 MiB, cache 1.0 GiB, cache hit ratio 99.2%)"),
    ((10000, 2200), "The database's cache, at its configured size, missed pages",
     "(data 164.0 MiB, cache 1.0 GiB, cache hit ratio 78.0%)"),
    (None, "The database's cache was kept warm throughout the run, at its configured size",
     "(data 164.0 MiB, cache 1.0 GiB)"),
])
def test_without_a_ratio_the_words_follow_the_counted_hit_ratio(hits, says, figures) -> None:
    manifest, counters = _unswept("warm", hits)
    [text] = regime_sentences(manifest, counters, ["e-none", "e-tde"], "e-none", "total")
    assert text.startswith(f"{says} {figures}")  # the plain twin's tables and indexes, not its files
    assert ("decrypted once" in text) == (hits != (10000, 2200))
    assert ("RAM holds its whole working set" in text) == (hits != (10000, 2200))
    assert ("--memory-ratio" in text) == (hits == (10000, 2200))


def test_a_cold_run_says_every_trial_began_from_an_empty_cache() -> None:
    manifest, counters = _unswept("cold", (10000, 0))
    [text] = regime_sentences(manifest, counters, ["e-none", "e-tde"], "e-none", "total")
    assert text.startswith("Every trial began with the database's cache and the OS page cache emptied (data 164.0 MiB, "
                           "cache 1.0 GiB)")


def test_no_plan_no_figures_invented() -> None:
    assert regime_sentences({}, _no_counters(), ["e-none"], "e-none", "total") == []
    assert regime_sentences({"plan": {"cache": "unknown"}}, _no_counters(), ["e-none"], "e-none", "total") == []
    [text] = regime_sentences({"plan": {"cache": "warm"}}, _no_counters(), ["e-none"], "e-none", "total")
    assert "MiB" not in text and "(data" not in text and "hit ratio" not in text


@pytest.mark.parametrize(("cache", "settings", "expected"), [
    (SqliteCache, {"cache_size": "-2000", "page_size": "4096"}, 2000 * 1024),
    (SqliteCache, {"cache_size": "100", "page_size": "4096"}, 100 * 4096),
    (SqliteCache, {}, None),
    (SharedBuffers, {"shared_buffers": "512MB"}, 512 * MIB),
    (SharedBuffers, {"shared_buffers": "16384"}, 16384 * 8192),  # a bare number counts 8 kB blocks
    (BufferPoolSize, {"innodb_buffer_pool_size": "1G"}, GIB),
    (BufferPoolSize, {"innodb_buffer_pool_size": "134217728"}, 128 * MIB),
    (DuckdbCache, {"memory_limit": "default"}, None),
])
def test_the_configured_cache_size_is_read_from_the_settings_the_manifest_records(cache, settings, expected) -> None:
    assert cache.configured_bytes(settings) == expected


@pytest.mark.parametrize(("ratio", "words"), [(0.25, "a quarter"), (0.26, "a quarter"), (0.5, "half"),
                                              (0.05, "5%"), (0.4, "40%")])
def test_fractions_in_words(ratio: float, words: str) -> None:
    assert fraction_words(ratio) == words


def _words(text: str) -> str:
    return " ".join(html.unescape(re.sub(r"<[^>]+>", " ", text)).split())


@pytest.mark.slow(seconds=15)
def test_a_real_run_at_one_ratio_says_its_regime_alike_in_the_terminal_summary_md_and_index_html(
        tmp_path, tpch_sf001) -> None:
    out = tmp_path / "run"
    env_path = str(ROOT / "src")
    done = subprocess.run(
        [sys.executable, "-m", "tdebench", "run", "--engine", "sqlite", "--sf", "0.01", "--memory-ratio", "0.25",
         "--trials", "1", "--workload-option", "queries=6", "--out", str(out),
         "--data-dir", str(Path(tpch_sf001[0]).parent)],
        capture_output=True, text=True, timeout=300, env={**os.environ, "PYTHONPATH": env_path})
    assert done.returncode == 0, done.stderr[-3000:]
    md = (out / "report" / "summary.md").read_text()
    [line] = [x for x in md.splitlines() if "(memory regime)" in x]
    sentence = line.split("(memory regime): ", 1)[1]
    configs = json.loads((out / "manifest.json").read_text())["configs"]
    assert {c["label"]: c.get("cache_bytes") for c in configs if "base_label" not in c} == {
        "sqlite-none": 2000 * 1024, "sqlite-sqlcipher-aes-256-cbc": 2000 * 1024}  # as configured, before the ratio
    assert sentence.startswith("The cache held 25% of the loaded data (") and "OS page cache" in sentence
    assert sentence in _words(done.stdout)
    assert sentence in _words((out / "report" / "index.html").read_text())


def test_the_share_said_is_the_cache_the_engine_made_not_the_ratio_asked():
    mib = 1024 * 1024
    # MariaDB's buffer pool has a minimum of 8 MiB: a quarter of 19.2 MiB came out at 42%
    words = ratio_sentence(0.25, 8 * mib, int(19.2 * mib), "disk")
    assert words.startswith("The cache held 41.7% of the loaded data (8.0 MiB of 19.2 MiB; --memory-ratio 0.25 asked "
                            "for 25%)")
    assert "about 25%" not in words and "a quarter" not in words and "about 42% of its data" in words
    assert "25%" in ratio_sentence(0.25, 41 * mib, 164 * mib, "disk")

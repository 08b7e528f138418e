"""The memory regime of a run in a DBA's words: how much of the data the database's cache held, and where the pages
it missed came from, one sentence per regime beside the verdict (terminal, summary.md and index.html alike).

Everything said comes from the manifest (``memory.regimes`` of a ``--memory-ratio`` run: ratio, cache and data
bytes, page source; with pages read from the disk, each block's common wait per read; the plan's cache mode; the
loaded data and configured cache bytes of the configs) and, for a run without a memory ratio, the engine's own cache
hit ratio over the headline step when it counts one.
"""

from __future__ import annotations

import statistics
from typing import Any

from tdebench.api.regime import loaded_bytes, split_label
from tdebench.report.counters_view import CounterIndex, fmt_hit
from tdebench.report.fmt import fmt_bytes
from tdebench.stats.common_wait import WAITS_KEY

#: a hit ratio at least this high counts as "every page was in the cache"
HIT_ALL = 0.99
#: fractions a DBA says in words (``about a quarter``)
FRACTIONS = ((0.1, "a tenth"), (0.2, "a fifth"), (0.25, "a quarter"), (1 / 3, "a third"), (0.5, "half"),
             (2 / 3, "two thirds"), (0.75, "three quarters"))
#: why the cost is small when the cache holds the data (column encryption decrypts a value on every read instead)
ONCE = ("page encryption (TDE, an encrypted filesystem) costs little here because a page is decrypted once, when it "
        "is read from disk, not on every read")


def fraction_words(ratio: float) -> str:
    """``a quarter`` for 0.25 (within 10% of it), else the percentage (``5%``)."""
    for value, words in FRACTIONS:
        if abs(ratio / value - 1) <= 0.1:
            return words
    return f"{ratio * 100:.2g}%"


def _sized(cache: int | None, data: int | None) -> str:
    """`` (41.0 MiB of 164 MiB)`` with the figures that are known."""
    if cache and data:
        return f" ({fmt_bytes(cache)} of {fmt_bytes(data)})"
    if cache:
        return f" (cache {fmt_bytes(cache)})"
    return f" (data {fmt_bytes(data)})" if data else ""


def wait_clause(seconds: list[float]) -> str:
    """How long a read from the disk took, from the blocks' common waits per read (none: "")."""
    if not seconds:
        return ""
    us = [s * 1e6 for s in seconds]
    spread = f"; blocks from {min(us):.1f} to {max(us):.1f} µs" if len(us) > 1 else ""
    return (f" Each of those reads waited {statistics.fmean(us):.1f} µs on average (the twins' common wait{spread}): "
            "on a disk whose reads take less time, the CPU work of decrypting is a larger share of a query's time.")


def ratio_sentence(ratio: float, cache: int | None, data: int | None, source: str,
                   waits: list[float] | None = None) -> str:
    """One memory ratio's regime: the share of the data the cache held and where its misses came from (and, with
    ``waits``, each block's common wait per read in seconds, how long those were)."""
    share = cache / data if cache and data else ratio  # what the engine made of the ratio (it may have a minimum)
    asked = "" if abs(share / ratio - 1) <= 0.1 else f"; --memory-ratio {ratio:g} asked for {ratio * 100:g}%"
    sized = _sized(cache, data)
    sized = f"{sized[:-1]}{asked})" if sized else (f" ({asked[2:]})" if asked else "")
    if share >= 1:
        return (f"The cache was {share:.3g} times the loaded data{sized}, so every page fitted in it: "
                f"what a server whose RAM holds its whole working set sees; {ONCE}.")
    held = f"The cache held {share * 100:.3g}% of the loaded data{sized}"
    if source == "memory":
        return (f"{held} and the pages it missed came from the OS page cache, not the disk: the decryption cost "
                "without the disk's wait; a server whose data is on disk pays the disk too, so its overhead is "
                "smaller in proportion.")
    return (f"{held} and the pages it missed were read from the disk: what a server whose RAM is about "
            f"{fraction_words(share)} of its data sees; every miss is a disk read and, for an encrypted config, "
            "a decryption." + wait_clause(waits or []))


def unswept_sentence(data: int | None, cache: int | None, cold: bool, hit: float | None) -> str:
    """A run without a memory ratio: each engine's cache at its configured size (``cache``: its bytes, when the
    settings say), warm or emptied before each trial."""
    size = ", ".join(f"{what} {fmt_bytes(n)}" for what, n in (("data", data), ("cache", cache)) if n)
    sized = f" ({size})" if size else ""
    if cold:
        return (f"Every trial began with the database's cache and the OS page cache emptied{sized}: "
                "what a server sees right after a restart, before its cache has filled; every page a trial needs is "
                "first read from the disk and, for an encrypted config, decrypted.")
    figures = ", ".join(x for x in (size, f"cache hit ratio {fmt_hit(hit)}" if hit is not None else "") if x)
    if hit is not None and hit >= HIT_ALL:
        every = "Every page" if hit >= 1 else "Nearly every page"
        return (f"{every} was in the database's cache ({figures}): what a server whose RAM holds its whole "
                f"working set sees; {ONCE}.")
    if hit is not None:
        return (f"The database's cache, at its configured size, missed pages ({figures}): each miss was read from "
                "the OS page cache or the disk and, for an encrypted config, decrypted again; --memory-ratio sizes "
                "the cache against the data and says where the misses come from.")
    return (f"The database's cache was kept warm throughout the run, at its configured size{sized}; how much of the "
            "data it held was not counted: if it holds all of it, "
            f"this is what a server whose RAM holds its whole working set sees, and {ONCE}.")


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0 else None


def regime_sentences(manifest: dict[str, Any], counters: CounterIndex, configs: list[str], plain: str | None,
                     step: str | None) -> list[str]:
    """The regime sentences of one engine's ``configs`` (``plain``: its plain twin; ``step``: the headline's step),
    one per memory ratio in the order run, or one for a run without a ratio; none without a plan or when the plan
    does not say how the cache ran (an imported run)."""
    plan = _dict(manifest.get("plan"))
    if not plan or not configs:
        return []
    memory = _dict(manifest.get("memory"))
    regimes = _dict(memory.get("regimes"))
    ratios: dict[float, list[str]] = {}
    for config in configs:
        ratio = split_label(config)[1]
        if ratio is not None:
            ratios.setdefault(ratio, []).append(config)
    if not ratios:
        if plan.get("cache", "warm") not in ("warm", "cold"):  # an imported run: how it ran is not known
            return []
        twin = plain or configs[0]
        entry = _config(manifest, twin)
        hit = counters.hit_ratio(twin, step) if step else None
        return [unswept_sentence(_int(loaded_bytes(entry)), _int(entry.get("cache_bytes")),
                                 plan.get("cache") == "cold", hit)]
    out = []
    for ratio, labels in ratios.items():
        entries = [_dict(regimes.get(c)) for c in sorted(labels, key=lambda c: c != plain)]
        entry = next((e for e in entries if e), {})
        waits = _dict(_dict(manifest.get(WAITS_KEY)).get(f"{ratio:g}"))
        out.append(ratio_sentence(ratio, _int(entry.get("cache_bytes")), _int(entry.get("data_bytes")),
                                  str(entry.get("page_source") or "disk"),
                                  [float(v) for v in waits.values() if isinstance(v, (int, float))]))
    return out


def _config(manifest: dict[str, Any], label: str) -> dict[str, Any]:
    return next((c for c in manifest.get("configs") or [] if isinstance(c, dict) and c.get("label") == label), {})

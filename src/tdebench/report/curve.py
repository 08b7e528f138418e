"""The TDE cost curve: the overhead of each encryption against the cache/data ratio and the measured hit ratio.

Drawn for runs that swept ``--memory-ratio`` (config labels ``...@mem<ratio>``, :mod:`tdebench.api.regime`), per
engine and encryption, for the engine's headline series (TPC-H power total, TPC-C TPM at the most virtual users,
...). Each point: the overhead vs the plain twin at the same ratio with its 95% CI, the hit ratio of the engine's
cache (plain twin and encrypted config), the bytes that crossed the encryption boundary and the cipher floor they
imply. A paragraph reads the curve in words.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import matplotlib
import numpy as np

from tdebench.api.regime import split_label
from tdebench.measure import cipherspeed as cm
from tdebench.report.mdkit import md_table
from tdebench.report import charts
from tdebench.report.charts import Chart
from tdebench.report.counters_view import CounterIndex, Crossing, fmt_hit
from tdebench.report.floor import cipher_table
from tdebench.report.fmt import DASH, fmt_bytes, fmt_ci, fmt_pct, fmt_value
from tdebench.report.htmlkit import Col, Safe, join, table, tag
from tdebench.report.model import EngineSummary, RunSummary
from tdebench.report.texts import headline_label
from tdebench.stats.load import SeriesKey, is_plain
from tdebench.stats.metrics import higher_is_better
from tdebench.stats.overhead import Overhead


@dataclass
class CurvePoint:
    """One encrypted config at one memory ratio."""

    ratio: float
    config: str
    plain: str | None
    cost_pct: float | None  # slower (times) or throughput lost (TPM, tps), in %
    ci_low: float | None
    ci_high: float | None
    n: int
    hit_plain: float | None
    hit_config: float | None
    crossing: Crossing
    floor_s: float | None
    cache_bytes: int | None
    values: float | None = None  # encrypted column values read (an upper bound of the values decrypted)

    @property
    def resolved(self) -> bool:
        """True when the 95% CI excludes 0."""
        return self.ci_low is not None and self.ci_high is not None and (self.ci_low > 0 or self.ci_high < 0)


@dataclass
class Curve:
    """One engine's headline series against the memory ratio, one line per encryption."""

    engine: str
    key: SeriesKey  # config ""
    lines: dict[str, list[CurvePoint]] = field(default_factory=dict)  # encryption -> points by ratio

    @property
    def what(self) -> str:
        return headline_label(self.key)

    @property
    def throughput(self) -> bool:
        return higher_is_better(self.key.metric)


def _cost(o: Overhead | None, throughput: bool) -> tuple[float | None, float | None, float | None, int]:
    if o is None:
        return None, None, None, 0
    if not throughput:
        return o.overhead_pct, o.ci_low_pct, o.ci_high_pct, o.n
    low = None if o.ci_high_pct is None else -o.ci_high_pct
    high = None if o.ci_low_pct is None else -o.ci_low_pct
    return -o.overhead_pct, low, high, o.n


def _floor(enc: str, crossing: Crossing, speeds: list[cm.CipherSpeed] | None) -> float | None:
    if speeds is None or not crossing.known:
        return None
    return cm.floor_for_spec(enc, speeds, int(crossing.decrypted or 0), int(crossing.encrypted or 0),
                             include_mac=True)


def _cache_bytes(rs: RunSummary, config: str) -> int | None:
    regimes = (rs.manifest.get("memory") or {}).get("regimes") or {}
    value = (regimes.get(config) or {}).get("cache_bytes")
    return int(value) if isinstance(value, (int, float)) else None


def engine_curve(rs: RunSummary, es: EngineSummary, counters: CounterIndex,
                 speeds: list[cm.CipherSpeed] | None) -> Curve | None:
    """The curve of one engine; None without configs at two or more memory ratios."""
    if es.headline is None:
        return None
    m = rs.analysis.measurements
    regimes = {c: split_label(c) for c in es.configs}
    ratios = {r for _, r in regimes.values() if r is not None}
    if len(ratios) < 1 or all(r is None for _, r in regimes.values()):
        return None
    curve = Curve(es.engine, es.headline)
    step = es.headline.step
    for config, (_, ratio) in regimes.items():
        enc = m.encryption.get(config, "")
        if ratio is None or is_plain(enc):
            continue
        plain = rs.analysis.baselines.get(config)
        cost, low, high, n = _cost(rs.analysis.overhead(es.headline._replace(config=config)), curve.throughput)
        crossing = counters.crossing(config, step)
        curve.lines.setdefault(enc, []).append(CurvePoint(
            ratio, config, plain, cost, low, high, n, counters.hit_ratio(plain, step) if plain else None,
            counters.hit_ratio(config, step), crossing, _floor(enc, crossing, speeds), _cache_bytes(rs, config),
            counters.value(config, step, "values_read_encrypted")))
    for points in curve.lines.values():
        points.sort(key=lambda p: p.ratio)
    return curve if curve.lines else None


def curves(rs: RunSummary) -> list[Curve]:
    """One curve per engine whose configs ran at memory ratios."""
    if not any(split_label(c)[1] is not None for es in rs.engines for c in es.configs):
        return []
    counters = CounterIndex(rs.analysis.measurements)
    specs = sorted({rs.analysis.measurements.encryption.get(c, "") for es in rs.engines for c in es.configs})
    table_ = cipher_table(rs.run_dir, specs)
    speeds = table_.speeds if table_ is not None else None
    out = [engine_curve(rs, es, counters, speeds) for es in rs.engines]
    return [c for c in out if c is not None]


# words --------------------------------------------------------------------------------------------------------
def _pct_of_data(ratio: float) -> str:
    return f"{ratio * 100:g}%"


def _hit_words(p: CurvePoint) -> str:
    hit = p.hit_config if p.hit_config is not None else p.hit_plain
    return f" (cache hit ratio {fmt_hit(hit)})" if hit is not None else ""


def point_words(curve: Curve, enc: str, p: CurvePoint) -> str:
    """``at a 25% cache/data ratio (cache hit ratio 97.1%), tde:aes-256-ctr costs +8.2% (95% CI 5.1–11.0%)``."""
    where = f"at a {_pct_of_data(p.ratio)} cache/data ratio{_hit_words(p)}"
    if p.cost_pct is None:
        return f"{where}, {enc} has no overhead figure"
    what = "throughput" if curve.throughput else "time"
    if p.ci_low is None or p.ci_high is None:
        return f"{where}, {enc} costs {fmt_pct(p.cost_pct)} {what} (n = {p.n}, no interval)"
    if not p.resolved:
        return f"{where}, {enc} has no measurable cost ({fmt_pct(p.cost_pct)}, 95% CI {fmt_ci(p.ci_low, p.ci_high)})"
    return f"{where}, {enc} costs {fmt_pct(p.cost_pct)} {what} (95% CI {fmt_ci(p.ci_low, p.ci_high)})"


def _trend(points: list[CurvePoint]) -> str:
    """A sentence when the cost clearly falls from the smallest to the largest ratio."""
    first, last = points[0], points[-1]
    if len(points) < 2 or first.cost_pct is None or last.cost_pct is None or not first.resolved:
        return ""
    if not (first.cost_pct > last.cost_pct and (not last.resolved or last.cost_pct < (first.ci_low or 0))):
        return ""
    text = " The cost falls as the cache holds more of the data"
    if first.crossing.decrypted is not None and last.crossing.decrypted is not None:
        text += (f": {fmt_bytes(first.crossing.decrypted)} decrypted per trial at {_pct_of_data(first.ratio)}, "
                 f"{fmt_bytes(last.crossing.decrypted)} at {_pct_of_data(last.ratio)}")
    return text + "."


def reading(curve: Curve, host: str) -> str:
    """The paragraph under the chart: each encryption at the smallest ratio, the one nearest 25% and the largest."""
    sentences = []
    for enc, points in curve.lines.items():
        chosen = points
        if len(points) > 3:
            chosen = [points[0], min(points[1:-1], key=lambda p: abs(math.log(p.ratio / 0.25))), points[-1]]
        text = "; ".join(point_words(curve, enc, p) for p in chosen)
        sentences.append(text[0].upper() + text[1:] + "." + _trend(points))
    return f"{curve.engine}, {curve.what}, on this machine{host}: " + " ".join(sentences)


def host_words(rs: RunSummary) -> str:
    host = rs.manifest.get("host") if isinstance(rs.manifest.get("host"), dict) else {}
    cpu = host.get("cpu_model") or host.get("cpu")
    return f" ({cpu})" if cpu else ""


# chart ----------------------------------------------------------------------------------------------------------
def chart(curve: Curve) -> Chart | None:
    """Cost (95% CI) against the memory ratio (log scale) and against the encrypted config's hit ratio."""
    lines = [(enc, pts) for enc, pts in curve.lines.items() if any(p.cost_pct is not None for p in pts)]
    if not lines:
        return None
    colors = charts.color_map([enc for enc, _ in lines], [])
    ylabel = "throughput lost (%)" if curve.throughput else "slower than plain (%)"
    title = f"{curve.engine}: cost of encryption vs cache size ({curve.what})"
    with matplotlib.rc_context(charts.RC):
        fig = charts._figure(10.0, 3.8)
        left, right = fig.subplots(1, 2, sharey=True)
        for enc, pts in lines:
            pts = [p for p in pts if p.cost_pct is not None]
            y = np.array([p.cost_pct for p in pts], dtype=float)
            err = np.vstack([[max(0.0, p.cost_pct - p.ci_low) if p.ci_low is not None else 0.0 for p in pts],
                             [max(0.0, p.ci_high - p.cost_pct) if p.ci_high is not None else 0.0 for p in pts]])
            left.errorbar([p.ratio for p in pts], y, yerr=err, marker="o", capsize=3, label=enc, color=colors[enc])
            for p in pts:
                if p.hit_config is not None:
                    left.annotate(fmt_hit(p.hit_config), (p.ratio, p.cost_pct), textcoords="offset points",
                                  xytext=(4, 6), fontsize=8, color=colors[enc])
            hits = [(p.hit_config * 100, p) for p in pts if p.hit_config is not None]
            if hits:
                right.errorbar([h for h, _ in hits], [p.cost_pct for _, p in hits],
                               yerr=np.vstack([[max(0.0, p.cost_pct - p.ci_low) if p.ci_low is not None else 0.0
                                                for _, p in hits],
                                               [max(0.0, p.ci_high - p.cost_pct) if p.ci_high is not None else 0.0
                                                for _, p in hits]]),
                               marker="o", capsize=3, linestyle="none", color=colors[enc])
        left.set_xscale("log")
        ratios = sorted({p.ratio for _, pts in lines for p in pts})
        left.set_xticks(ratios)
        left.set_xticklabels([f"{r:g}" for r in ratios])
        left.minorticks_off()
        left.set_xlabel("cache / loaded data (memory ratio, log scale)")
        right.set_xlabel("cache hit ratio of the encrypted config (%)")
        left.set_ylabel(ylabel)
        for ax in (left, right):
            ax.axhline(0, color=charts.PLAIN_COLOR, linewidth=0.8)
            ax.grid(color=charts.GRID)
        left.legend()
        left.set_title(title)
        svg = charts.to_svg(fig, title)
    caption = ("Each point: the encrypted config against its plain twin at the same memory ratio (median over "
               "trials, whiskers the 95% CI); numbers beside the points are the encrypted config's cache hit ratio. "
               "Right: the same points against that hit ratio.")
    return Chart(title, caption, svg)


# tables ----------------------------------------------------------------------------------------------------------
HEADERS = ["encryption", "memory ratio", "cache", "hit ratio plain / encrypted", "decrypted", "encrypted",
           "cipher floor", "cost (95% CI)", "n"]
_RIGHT = {1, 2, 3, 4, 5, 6, 7, 8}


def rows(curve: Curve) -> list[list[str]]:
    out = []
    for enc, points in curve.lines.items():
        for p in points:
            mark = "≈" if p.crossing.estimate else ""
            cost = DASH if p.cost_pct is None else f"{fmt_pct(p.cost_pct)} ({fmt_ci(p.ci_low, p.ci_high)})"
            out.append([enc, f"{p.ratio:g}", fmt_bytes(p.cache_bytes) if p.cache_bytes else DASH,
                        f"{fmt_hit(p.hit_plain)} / {fmt_hit(p.hit_config)}",
                        mark + fmt_bytes(p.crossing.decrypted) if p.crossing.decrypted is not None else
                        f"≤{p.values:,.0f} values" if p.values is not None else DASH,
                        mark + fmt_bytes(p.crossing.encrypted) if p.crossing.encrypted is not None else DASH,
                        fmt_value(p.floor_s, "s") if p.floor_s is not None else DASH, cost, str(p.n)])
    return out


NOTE = ("Cost = how much slower (times) or how much less throughput (TPM, tps) the encrypted config had than its "
        "plain twin at the same memory ratio, median over trials with the 95% CI. Memory ratio = the engine's own "
        "cache (InnoDB buffer pool, PostgreSQL shared_buffers, SQLite page cache per connection) ÷ the data loaded "
        "into the plain twin; {source}: docs/memory.md. Hit ratio = 1 − misses / "
        "requests of that cache over the measured steps; decrypted/encrypted = bytes that crossed the encryption "
        "boundary per trial as the engine counts them (≈: estimated); cipher floor = those bytes ÷ this machine's "
        "cipher speed (one core).")
#: where the pages the cache missed came from, by the regimes' ``page_source``
SOURCES = {
    "disk": ("the pages it missed came from the disk: the OS page cache is bypassed (MariaDB O_DIRECT), bounded "
             "(PostgreSQL, and MariaDB under fscrypt or gocryptfs, which undo O_DIRECT: a memory cgroup) or "
             "irrelevant (SQLCipher decrypts on every miss of its own cache)"),
    "memory": ("the pages it missed came from the OS page cache, which held the data (--page-source memory): the "
               "engine still read and decrypted every page it missed, without waiting for the disk"),
}


def note(rs: RunSummary) -> str:
    """:data:`NOTE` with where the run's misses came from (both sentences when its engines differed)."""
    regimes = (rs.manifest.get("memory") or {}).get("regimes") or {}
    found = {str(r.get("page_source") or "disk") for r in regimes.values() if isinstance(r, dict)} or {"disk"}
    return NOTE.format(source="; ".join(SOURCES.get(s, SOURCES["disk"]) for s in sorted(found)))


def html_section(rs: RunSummary) -> Safe:
    """The curve section (nothing when the run swept no memory ratio)."""
    made = curves(rs)
    if not made:
        return Safe("")
    parts: list[object] = [tag("h2", "TDE cost curve: overhead vs cache size")]
    host = host_words(rs)
    for c in made:
        parts.append(tag("h3", f"{c.engine}: {c.what}"))
        ch = chart(c)
        if ch is not None:
            parts.append(tag("figure", join([Safe(ch.svg), tag("figcaption", ch.caption)])))
        parts.append(tag("p", reading(c, host), class_="verdict"))
        parts.append(table([Col(h, i in _RIGHT) for i, h in enumerate(HEADERS)], rows(c)))
    parts.append(tag("p", note(rs), class_="note"))
    return tag("section", join(parts), id="memory-curve")


def md_lines(rs: RunSummary) -> list[str]:
    """The curve section of summary.md (nothing when the run swept no memory ratio)."""
    made = curves(rs)
    if not made:
        return []
    out = ["## TDE cost curve: overhead vs cache size", ""]
    host = host_words(rs)
    for c in made:
        out += [f"### {c.engine}: {c.what}", "", reading(c, host), ""]
        out += md_table(HEADERS, rows(c), _RIGHT) + [""]
    return out + [note(rs), ""]

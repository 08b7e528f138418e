"""Charts as inline SVG strings (matplotlib ``Figure`` objects, no pyplot, no GUI backend).

Every function returns ``None`` when its data is absent, so callers can simply skip it.
The SVG is cleaned for inlining into HTML: no XML prolog, DOCTYPE, metadata or namespace
URLs, and element ids prefixed so that several charts can live on one page.
"""

from __future__ import annotations

import hashlib
import io
import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass

import matplotlib
import numpy as np
from matplotlib.colors import TwoSlopeNorm
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, NullFormatter

PLAIN_COLOR = "#8c96a3"
PALETTE = ("#d95f02", "#1b9e77", "#7570b3", "#e7298a", "#66a61e", "#e6ab02", "#a6761d")
TEXT = "#1f2933"
GRID = "#e4e7eb"
RC = {
    "svg.fonttype": "none", "svg.hashsalt": "tdebench", "font.family": "sans-serif",
    "font.sans-serif": ["DejaVu Sans", "Arial", "Helvetica"], "font.size": 10,
    "axes.edgecolor": "#9aa5b1", "axes.labelcolor": TEXT, "xtick.color": TEXT,
    "ytick.color": TEXT, "axes.spines.top": False, "axes.spines.right": False,
    "axes.titlesize": 11, "axes.titleweight": "bold", "axes.titlelocation": "left",
    "legend.frameon": False,
}
_ID_REF = re.compile(r'(\bid="|href="#|url\(#)([^")]+)')


@dataclass(frozen=True)
class Chart:
    """One chart for the report: a title, a caption and the inline SVG."""

    title: str
    caption: str
    svg: str


def color_map(configs: Sequence[str], plain: Sequence[str]) -> dict[str, str]:
    """A stable color per config: grey for plain configs, the palette for the others."""
    colors, cycle = {}, itertools.cycle(PALETTE)
    for c in configs:
        colors[c] = PLAIN_COLOR if c in plain else next(cycle)
    return colors


def to_svg(fig: Figure, label: str) -> str:
    """Render a figure to an inline-ready, responsive SVG string with unique ids."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight",
                metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    svg = buf.getvalue()
    svg = re.sub(r"<\?xml[^>]*\?>\s*", "", svg)
    svg = re.sub(r"<!DOCTYPE[^>]*>\s*", "", svg, flags=re.S)
    svg = re.sub(r"<metadata>.*?</metadata>\s*", "", svg, flags=re.S)
    svg = re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", svg)
    prefix = "c" + hashlib.sha1((label + svg).encode()).hexdigest()[:8] + "-"
    svg = _ID_REF.sub(lambda m: m.group(1) + prefix + m.group(2), svg)
    label = label.replace('"', "'").replace("&", "and").replace("<", "").replace(">", "")
    return re.sub(r'<svg\s+width="([\d.]+)pt"\s+height="([\d.]+)pt"',
                  rf'<svg role="img" aria-label="{label}" class="chart" '
                  r'style="max-width:\1pt"', svg, count=1).strip()


def _seconds_scale(values: np.ndarray) -> tuple[float, str]:
    return (1000.0, "ms") if values.size and float(np.nanmax(values)) < 1 else (1.0, "s")


def _figure(width: float, height: float) -> Figure:
    return Figure(figsize=(width, height), dpi=100, layout="constrained")


def box_plot(groups: Sequence[tuple[str, np.ndarray]], colors: dict[str, str], *, unit: str,
             title: str) -> str | None:
    """Horizontal box plots with every trial drawn as a dot (n is small)."""
    groups = [(label, np.asarray(v, dtype=float)) for label, v in groups if len(v)]
    if not groups:
        return None
    scale, shown = _seconds_scale(np.concatenate([v for _, v in groups])) if unit == "s" else (1.0, unit)
    with matplotlib.rc_context(RC):
        fig = _figure(8.0, 0.9 + 0.62 * len(groups))
        ax = fig.subplots()
        data = [v * scale for _, v in groups][::-1]
        labels = [label for label, _ in groups][::-1]
        box = ax.boxplot(data, orientation="horizontal", widths=0.5, patch_artist=True,
                         showfliers=False, medianprops={"color": TEXT, "linewidth": 1.6})
        rng = np.random.default_rng(0)
        for i, (patch, label) in enumerate(zip(box["boxes"], labels, strict=True)):
            patch.set(facecolor=colors.get(label, PLAIN_COLOR), alpha=0.35, edgecolor="#52606d")
            jitter = rng.uniform(-0.12, 0.12, data[i].size)
            ax.scatter(data[i], np.full(data[i].size, i + 1) + jitter, s=22, zorder=3,
                       color=colors.get(label, PLAIN_COLOR), edgecolor="white", linewidth=0.6)
        ax.set_yticks(range(1, len(labels) + 1), labels)
        ax.set_xlabel(shown)
        ax.grid(axis="x", color=GRID)
        ax.set_title(title)
        return to_svg(fig, title)


def query_bars(queries: Sequence[str], series: Sequence[tuple[str, Sequence[float | None],
               Sequence[float | None], Sequence[float | None]]], colors: dict[str, str], *,
               title: str) -> str | None:
    """Grouped bars of the median time per query and config (log scale), CI whiskers."""
    if not queries or not series:
        return None
    allv = np.array([x for _, med, _, _ in series for x in med if x is not None], dtype=float)
    if allv.size == 0:
        return None
    scale, unit = _seconds_scale(allv)
    width = 0.8 / len(series)
    with matplotlib.rc_context(RC):
        fig = _figure(11.0, 3.9)
        ax = fig.subplots()
        x = np.arange(len(queries))
        for i, (label, med, lo, hi) in enumerate(series):
            m = np.array([np.nan if v is None else v * scale for v in med])
            low = np.array([np.nan if v is None else v * scale for v in lo])
            high = np.array([np.nan if v is None else v * scale for v in hi])
            pos = x - 0.4 + width * (i + 0.5)
            ax.bar(pos, m, width * 0.92, color=colors.get(label, PLAIN_COLOR), label=label)
            err = np.vstack([np.clip(m - low, 0, None), np.clip(high - m, 0, None)])
            ax.errorbar(pos, m, yerr=np.nan_to_num(err), fmt="none", ecolor="#323f4b",
                        elinewidth=0.9, capsize=1.8)
        ax.set_yscale("log")
        plain_fmt = FuncFormatter(lambda v, _: f"{v:g}")
        ax.yaxis.set_major_formatter(plain_fmt)
        span = float(np.nanmax(allv) / np.nanmin(allv[allv > 0])) if np.any(allv > 0) else 1.0
        ax.yaxis.set_minor_formatter(plain_fmt if span < 10 else NullFormatter())
        ax.set_xticks(x, queries)
        ax.set_xlim(-0.6, len(queries) - 0.4)
        ax.set_ylabel(f"median ({unit}, log scale)")
        ax.grid(axis="y", color=GRID, which="major")
        ax.legend(loc="upper left", bbox_to_anchor=(0, -0.1), ncols=min(len(series), 4))
        ax.set_title(title)
        return to_svg(fig, title)


def overhead_heatmap(queries: Sequence[str], configs: Sequence[str],
                     pct: Sequence[Sequence[float | None]],
                     significant: Sequence[Sequence[bool]], *, title: str) -> str | None:
    """Overhead % per query (columns) and config (rows); non-significant cells are faded."""
    data = np.array([[np.nan if v is None else v for v in row] for row in pct], dtype=float)
    if data.size == 0 or np.all(np.isnan(data)):
        return None
    vmax = max(5.0, float(np.nanmax(np.abs(data))))
    with matplotlib.rc_context(RC):
        fig = _figure(11.0, 1.2 + 0.55 * len(configs))
        ax = fig.subplots()
        img = ax.pcolormesh(np.arange(data.shape[1] + 1) - 0.5, np.arange(data.shape[0] + 1) - 0.5,
                            np.ma.masked_invalid(data), cmap="RdBu_r",
                            norm=TwoSlopeNorm(0.0, -vmax, vmax), edgecolors="white", linewidth=1.0)
        ax.invert_yaxis()
        for (r, c), v in np.ndenumerate(data):
            if np.isnan(v):
                continue
            sig = significant[r][c]
            ax.text(c, r, f"{v:+.0f}" + ("" if sig else "?"), ha="center", va="center",
                    fontsize=8, color="white" if abs(v) > 0.6 * vmax else TEXT,
                    alpha=1.0 if sig else 0.55, fontweight="bold" if sig else "normal")
        ax.set_xticks(range(len(queries)), queries)
        ax.set_yticks(range(len(configs)), configs)
        ax.tick_params(length=0)
        for side in ("left", "bottom"):
            ax.spines[side].set_visible(False)
        bar = fig.colorbar(img, ax=ax, label="overhead %", fraction=0.025, pad=0.01)
        if bar.solids is not None:
            bar.solids.set_rasterized(False)  # vector, no embedded bitmap
        ax.set_title(title)
        return to_svg(fig, title)


def tpm_vs_users(lines: Sequence[tuple[str, Sequence[int], Sequence[float],
                 Sequence[float | None], Sequence[float | None]]], colors: dict[str, str], *,
                 title: str, ylabel: str = "TPM (median)") -> str | None:
    """OLTP throughput (median TPM, NOPM or tps, CI whiskers) against virtual users, one line per config."""
    lines = [line for line in lines if len(line[1])]
    if not lines:
        return None
    with matplotlib.rc_context(RC):
        fig = _figure(8.0, 3.6)
        ax = fig.subplots()
        for label, vus, med, lo, hi in lines:
            m = np.asarray(med, dtype=float)
            err = np.vstack([[0 if lo_ is None else max(0.0, mm - lo_) for mm, lo_ in zip(m, lo)],
                             [0 if hi_ is None else max(0.0, hi_ - mm) for mm, hi_ in zip(m, hi)]])
            ax.errorbar(vus, m, yerr=err, marker="o", capsize=3, label=label,
                        color=colors.get(label, PLAIN_COLOR))
        ax.set_xlabel("virtual users")
        ax.set_ylabel(ylabel)
        ax.set_xticks(sorted({v for line in lines for v in line[1]}))
        ax.grid(color=GRID)
        ax.legend()
        ax.set_title(title)
        return to_svg(fig, title)


def cipher_floor(bars: Sequence[tuple[str, float]], *, unit: str, title: str) -> str | None:
    """Raw cipher speed per algorithm (the floor any encrypted engine pays); None without data."""
    if not bars:
        return None
    with matplotlib.rc_context(RC):
        fig = _figure(8.0, 0.9 + 0.45 * len(bars))
        ax = fig.subplots()
        ax.barh([b[0] for b in bars][::-1], [b[1] for b in bars][::-1], color=PALETTE[1])
        ax.set_xlabel(unit)
        ax.grid(axis="x", color=GRID)
        ax.set_title(title)
        return to_svg(fig, title)

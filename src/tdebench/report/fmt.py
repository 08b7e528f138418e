"""Number formatting shared by the HTML, Markdown and CSV outputs."""

from __future__ import annotations

import math

DASH = "—"


def _sig(x: float, digits: int = 3) -> str:
    """x with ``digits`` significant digits, without scientific notation for usual ranges."""
    if x == 0:
        return "0"
    decimals = max(0, digits - 1 - int(math.floor(math.log10(abs(x)))))
    return f"{x:,.{decimals}f}"


def fmt_value(x: float | None, unit: str = "") -> str:
    """A measured value with its unit: seconds become ms below 1 s, bytes become MiB/GiB."""
    if x is None or not math.isfinite(x):
        return DASH
    if unit == "s":
        return f"{_sig(x * 1000)} ms" if abs(x) < 1 else f"{_sig(x, 4)} s"
    if unit in ("bytes", "B"):
        return fmt_bytes(x)
    text = _sig(x, 4) if abs(x) < 1000 else f"{x:,.0f}"
    return f"{text} {unit}".rstrip()


def fmt_difference(x: float | None, low: float | None, high: float | None, unit: str = "") -> str:
    """A signed difference with its interval in one scale and precision: ``+6.13 ms [+5.90, +6.36]`` (seconds as
    ms below 1 s); the estimate alone when it has no interval, — when there is no estimate."""
    if x is None or not math.isfinite(x):
        return DASH
    bounds = [v for v in (low, high) if v is not None and math.isfinite(v)]
    scale, shown = (1000.0, "ms") if unit == "s" and max(map(abs, [x, *bounds])) < 1 else (1.0, unit)
    largest = max(abs(v) * scale for v in [x, *bounds])
    decimals = max(0, 2 - int(math.floor(math.log10(largest)))) if largest > 0 else 0

    def one(v: float) -> str:
        text = f"{v * scale:+,.{decimals}f}"
        return text[1:] if float(text) == 0 else text

    interval = f" [{one(bounds[0])}, {one(bounds[1])}]" if len(bounds) == 2 else ""
    return f"{one(x)} {shown}".rstrip() + interval


def fmt_bytes(x: float | None) -> str:
    """Bytes in binary units (KiB, MiB, GiB)."""
    if x is None:
        return DASH
    for unit, size in (("GiB", 1024 ** 3), ("MiB", 1024 ** 2), ("KiB", 1024)):
        if abs(x) >= size:
            return f"{x / size:.1f} {unit}"
    return f"{x:.0f} B"


def fmt_pct(x: float | None, digits: int = 1) -> str:
    """Signed percentage, e.g. ``+11.1%``."""
    if x is None or not math.isfinite(x):
        return DASH
    text = f"{x:+.{digits}f}%"
    return "0.0%" if text in ("+0.0%", "-0.0%") else text


def fmt_ci(low: float | None, high: float | None, digits: int = 1) -> str:
    """A percentage interval: ``8.1–16.0%`` when both ends are positive, else ``-3.0% to +5.1%``."""
    if low is None or high is None:
        return DASH
    if low > 0 and high > 0:
        return f"{low:.{digits}f}–{high:.{digits}f}%"
    return f"{fmt_pct(low, digits)} to {fmt_pct(high, digits)}"


def fmt_value_ci(low: float | None, high: float | None, unit: str) -> str:
    """An interval of measured values, e.g. ``57.1–63.0 ms``."""
    if low is None or high is None:
        return DASH
    lo, hi = fmt_value(low, unit), fmt_value(high, unit)
    lo_num, lo_unit = (lo.rsplit(" ", 1) + [""])[:2]
    hi_num, hi_unit = (hi.rsplit(" ", 1) + [""])[:2]
    return f"{lo_num}–{hi}" if lo_unit == hi_unit else f"{lo}–{hi}"


def fmt_p(p: float | None) -> str:
    """``p=0.004``, ``p<0.001`` or a dash when there is no p-value."""
    if p is None or not math.isfinite(p):
        return DASH
    return "p<0.001" if p < 0.001 else f"p={p:.3f}"


def fmt_csv(x: object) -> str:
    """A CSV cell: empty for None, full precision for floats, lower-case booleans."""
    if x is None:
        return ""
    if isinstance(x, bool):
        return "true" if x else "false"
    if isinstance(x, float):
        return "" if not math.isfinite(x) else repr(x)
    return str(x)

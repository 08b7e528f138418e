"""Which TPC-H scale factors make valid data (no imports: the option models of every workload loading TPC-H data
check it before anything runs)."""

from __future__ import annotations

SCALE_FACTOR_FIX = "use SF 0.01, 0.008 or at least 0.025"


def partsupp_duplicate(sf: float) -> int | None:
    """The first part whose four PARTSUPP suppliers are not distinct at ``sf``, else None. The spec's formula
    (clause 4.2.3: PS_SUPPKEY = (PS_PARTKEY + i·(S/4 + (PS_PARTKEY−1)/S)) mod S + 1, i = 0..3) repeats a
    supplier when S is small: at SF 0.002 part 101 gets supplier 2 twice. Above SF 0.024 it never does."""
    suppliers, parts = round(10000 * sf), round(200000 * sf)
    if suppliers > 240:
        return None
    for part in range(1, parts + 1):
        step = suppliers // 4 + (part - 1) // max(suppliers, 1)
        if len({(part + i * step) % max(suppliers, 1) for i in range(4)}) < 4:
            return part
    return None


def scale_factor_problem(sf: float) -> str | None:
    """Why ``sf`` makes invalid TPC-H data, or None."""
    part = partsupp_duplicate(sf)
    if part is None:
        return None
    return (f"TPC-H at SF {sf:g} repeats a supplier of part {part} in PARTSUPP (too few suppliers for the "
            f"spec's formula), so its primary key cannot be built")

"""Scale factors whose PARTSUPP keys the spec's formula repeats are refused before anything runs."""

from __future__ import annotations

import pytest

from tdebench.workloads.scalefactor import partsupp_duplicate, scale_factor_problem


def _suppliers_of(part: int, sf: float) -> list[int]:
    s = round(10000 * sf)
    return [(part + i * (s // 4 + (part - 1) // s)) % s + 1 for i in range(4)]


def test_sf_0002_repeats_a_supplier_as_tpchgen_does() -> None:
    # tpchgen-cli -s 0.002 writes "101|2" and "101|12" twice each in partsupp.tbl
    assert partsupp_duplicate(0.002) == 101
    assert sorted(_suppliers_of(101, 0.002)) == [2, 2, 12, 12]


@pytest.mark.parametrize("sf", [0.008, 0.01, 0.02, 0.025, 0.05, 0.1, 1, 10, 100])
def test_usual_scale_factors_are_valid(sf: float) -> None:
    assert partsupp_duplicate(sf) is None and scale_factor_problem(sf) is None


def test_every_small_sf_is_checked_part_by_part() -> None:
    bad = [k for k in range(1, 250) if partsupp_duplicate(k / 10000)]
    assert 20 in bad and 50 in bad and 100 not in bad and 80 not in bad
    for k in bad:
        part = partsupp_duplicate(k / 10000)
        assert len(set(_suppliers_of(part, k / 10000))) < 4
    assert "PARTSUPP" in (scale_factor_problem(0.002) or "")

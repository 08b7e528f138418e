"""The study reproductions (docs/reproductions/*.toml) stay runnable: each file, exactly as shipped, is parsed and
validated by tdebench (plan and workload options), the check a run makes before any work. Running them is heavy
(SF 1, minutes to hours: docs/reproductions.md); this keeps a change of an option or a workload from breaking them
unnoticed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.examples import validate

ROOT = Path(__file__).resolve().parents[2]
REPRODUCTIONS = sorted((ROOT / "docs" / "reproductions").glob("*.toml"))


def test_the_reproductions_are_there():
    assert len(REPRODUCTIONS) >= 5, "docs/reproductions/*.toml: the study files are gone"


@pytest.mark.parametrize("path", REPRODUCTIONS, ids=[p.stem for p in REPRODUCTIONS])
def test_reproduction_file_is_valid(path: Path, tmp_path: Path):
    validate(path, tmp_path)

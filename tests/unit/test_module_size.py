"""Small modules, one job: no module in src/tdebench is over 600 lines (the brief's limit)."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "tdebench"
MAX_LINES = 600


def long_modules(root: Path, limit: int) -> list[str]:
    """``path: N lines`` of every .py file under ``root`` longer than ``limit`` lines."""
    out = []
    for path in sorted(root.rglob("*.py")):
        count = len(path.read_text(encoding="utf-8").splitlines())
        if count > limit:
            out.append(f"{path.relative_to(root.parent)}: {count} lines")
    return out


def test_no_module_over_600_lines():
    assert len(list(PACKAGE.rglob("*.py"))) > 100, "found too few modules to be the package"
    too_long = long_modules(PACKAGE, MAX_LINES)
    assert not too_long, f"split these by job (at most {MAX_LINES} lines): " + "; ".join(too_long)


def test_the_check_sees_a_long_module(tmp_path):
    (tmp_path / "big.py").write_text("x = 1\n" * (MAX_LINES + 1))
    (tmp_path / "small.py").write_text("x = 1\n" * MAX_LINES)
    assert long_modules(tmp_path, MAX_LINES) == [f"{tmp_path.name}/big.py: {MAX_LINES + 1} lines"]

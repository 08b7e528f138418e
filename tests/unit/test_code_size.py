"""Small modules, small functions, read with ast: no module in src/ over 600 lines and no function over 60. A
function's length counts from its first decorator (or its ``def``) to its last line, signature, docstring and
nested functions included. Nothing is exempt."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"
MAX_MODULE_LINES = 600
MAX_FUNCTION_LINES = 60


def module_lines(path: Path) -> int:
    return len(path.read_text().splitlines())


def long_modules(paths: list[Path], root: Path, limit: int) -> list[str]:
    """``path: N lines`` of every module of ``paths`` longer than ``limit`` lines."""
    return [f"{p.relative_to(root)}: {n} lines" for p in paths if (n := module_lines(p)) > limit]


def function_lengths(tree: ast.AST) -> list[tuple[str, int, int]]:
    """(qualified name, first line, length) of every function and method in ``tree``."""
    out: list[tuple[str, int, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                out.append((prefix + child.name, first, child.end_lineno - first + 1))
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(tree, "")
    return out


def sources() -> list[Path]:
    paths = sorted(SRC.rglob("*.py"))
    assert len(paths) > 100, "found too few modules to be right"
    return paths


def test_no_module_over_600_lines():
    long = long_modules(sources(), SRC, MAX_MODULE_LINES)
    assert not long, f"split these modules by job (at most {MAX_MODULE_LINES} lines): " + "; ".join(long)


def test_the_check_sees_a_long_module(tmp_path):
    (tmp_path / "big.py").write_text("x = 1\n" * (MAX_MODULE_LINES + 1))
    (tmp_path / "small.py").write_text("x = 1\n" * MAX_MODULE_LINES)
    paths = sorted(tmp_path.glob("*.py"))
    assert long_modules(paths, tmp_path, MAX_MODULE_LINES) == [f"big.py: {MAX_MODULE_LINES + 1} lines"]


def test_no_function_over_60_lines():
    long = []
    for path in sources():
        for name, line, length in function_lengths(ast.parse(path.read_text(), str(path))):
            if length > MAX_FUNCTION_LINES:
                long.append(f"{path.relative_to(SRC)}:{line} {name}: {length} lines")
    assert not long, f"split these functions (at most {MAX_FUNCTION_LINES} lines): " + "; ".join(long)


def test_the_measure_counts_decorators_and_nested_functions():
    code = ("@decorator\ndef f():\n    def g():\n        return 1\n    return g\n\n"
            "class C:\n    def m(self):\n        pass\n")
    assert function_lengths(ast.parse(code)) == [("f", 1, 5), ("f.g", 3, 2), ("C.m", 8, 2)]

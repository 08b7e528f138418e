"""Every name the code uses is defined: pyflakes over src/ and tests/, failing on undefined names only.

A name a module uses but never imports fails only when that line runs, which may be a rare path (a refactor once
left ``socket_dirs`` unimported in a thread that only ran while servers were provisioned)."""

from __future__ import annotations

from pathlib import Path

import pytest

pyflakes_api = pytest.importorskip("pyflakes.api")
from pyflakes import messages  # noqa: E402
from pyflakes.reporter import Reporter  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
UNDEFINED = (messages.UndefinedName, messages.UndefinedExport, messages.UndefinedLocal)


class _Collect(Reporter):
    def __init__(self) -> None:
        super().__init__(None, None)
        self.found: list[str] = []

    def flake(self, message: messages.Message) -> None:
        if isinstance(message, UNDEFINED):
            self.found.append(str(message))

    def syntaxError(self, filename, msg, lineno, offset, text) -> None:  # noqa: N802 - pyflakes' name
        self.found.append(f"{filename}:{lineno}: {msg}")

    def unexpectedError(self, filename, msg) -> None:  # noqa: N802
        self.found.append(f"{filename}: {msg}")


def _undefined(paths: list[Path]) -> list[str]:
    reporter = _Collect()
    for path in paths:
        pyflakes_api.checkPath(str(path), reporter)
    return reporter.found


@pytest.mark.parametrize("tree", ["src", "tests", "benchmarks"])
def test_no_undefined_name(tree):
    paths = sorted((ROOT / tree).rglob("*.py"))
    assert paths
    found = _undefined(paths)
    assert not found, "\n".join(found)


def test_the_check_sees_an_undefined_name(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    return socket_dirs([])\n")
    assert any("socket_dirs" in line for line in _undefined([bad]))

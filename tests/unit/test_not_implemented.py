"""No engine hook raises ``NotImplementedError`` to mean "this engine has none": what only some engines can do is a
capability object an instance returns, or None (docs/adding-an-engine.md, "Optional capabilities"). Read with ast
(nothing is imported): in src/tdebench/api, src/tdebench/engines and the example engine, ``NotImplementedError`` is
raised only in the body of an ``@abstractmethod``, which every concrete subclass must override."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCANNED = [ROOT / "src" / "tdebench" / "api", ROOT / "src" / "tdebench" / "engines",
           ROOT / "docs" / "examples" / "plugins" / "minimal_engine.py"]


def _is_abstract(function: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    return any((isinstance(d, ast.Name) and d.id == "abstractmethod")
               or (isinstance(d, ast.Attribute) and d.attr == "abstractmethod") for d in function.decorator_list)


def _raises_not_implemented(node: ast.Raise) -> bool:
    exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
    return isinstance(exc, ast.Name) and exc.id == "NotImplementedError"


def violations(source: str, name: str = "<source>") -> list[str]:
    """``name:line: where`` of every ``raise NotImplementedError`` outside the body of an ``@abstractmethod``
    (a function nested in an abstract method counts on its own)."""
    found: list[str] = []

    def visit(node: ast.AST, where: str, abstract: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, f"{where}{child.name}.", _is_abstract(child))
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{where}{child.name}.", False)
            else:
                if isinstance(child, ast.Raise) and _raises_not_implemented(child) and not abstract:
                    found.append(f"{name}:{child.lineno}: {where.rstrip('.') or 'module'}")
                visit(child, where, abstract)

    visit(ast.parse(source), "", False)
    return found


def scanned_files() -> list[Path]:
    return sorted(f for p in SCANNED for f in ([p] if p.is_file() else p.rglob("*.py")))


def test_no_not_implemented_error_outside_abstract_methods():
    files = scanned_files()
    assert len(files) > 50, "the scan found too few modules: check SCANNED"
    found = [v for f in files for v in violations(f.read_text(), str(f.relative_to(ROOT)))]
    assert not found, ("NotImplementedError used as 'optional' (return a capability object or None, or declare the "
                       "method @abstractmethod):\n" + "\n".join(found))


def test_the_scan_catches_a_planted_optional_hook():
    planted = '''
from abc import ABC, abstractmethod
import abc

class Instance(ABC):
    @abstractmethod
    def connect(self):
        raise NotImplementedError

    @abc.abstractmethod
    def stop(self):
        raise NotImplementedError("every engine stops")

    def connect_path(self, path):
        raise NotImplementedError(f"{type(self).__name__} has no database file")

    @property
    def server_files(self):
        raise NotImplementedError

    @abstractmethod
    def outer(self):
        def inner():
            raise NotImplementedError
        return inner

class Mixin:
    def client_argv(self):  # provided by the instance
        raise NotImplementedError
'''
    assert violations(planted) == ["<source>:15: Instance.connect_path", "<source>:19: Instance.server_files",
                                   "<source>:24: Instance.outer.inner", "<source>:29: Mixin.client_argv"]

"""Nothing outside ``src/tdebench/engines/`` knows an engine by name or reaches into an engine's objects.

Read with ast (nothing is imported but the registry): code outside engines/ branches on the typed capabilities and
hooks declared in api/ (:class:`~tdebench.api.dialect.Dialect`, :class:`~tdebench.api.engine.Engine`,
:class:`~tdebench.api.engine.Instance`), so a new engine is added inside engines/ alone. The test fails on

- a comparison (``==``, ``!=``, ``in``, ``not in``, ``is``) with a string that is a registered engine's name,
  also inside a tuple, list or set compared against;
- such a string as a key of a dict literal, ``dict(name=...)`` keyword, subscript (a ``Literal[...]`` type declares
  values and looks nothing up) or ``match`` case;
- ``getattr``/``hasattr``/``setattr``/``vars`` applied to an engine or instance (an expression naming ``engine``,
  ``instance`` or ``inst``);
- a parameter called ``engine``, ``instance`` or ``inst`` typed ``Any`` (what reaches into its attributes).

There is no list of exceptions.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from tdebench.engines import engine_names

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "tdebench"
ENGINES = PACKAGE / "engines"
_OBJECT_NAMES = {"engine", "instance", "inst"}
_REFLECTION = {"getattr", "hasattr", "setattr", "delattr", "vars"}


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    what: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.what}"


def _names_in(node: ast.AST, names: set[str]) -> list[str]:
    """The registered names that ``node`` is (a string) or holds (a tuple/list/set/frozenset of strings)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value] if node.value in names else []
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return [n for e in node.elts for n in _names_in(e, names)]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in {"set", "frozenset"}:
        return [n for a in node.args for n in _names_in(a, names)]
    return []


def _mentions_object(node: ast.AST) -> bool:
    """``node`` is (or is an attribute of / an element of) something called engine, instance or inst."""
    while True:
        if isinstance(node, ast.Name):
            return node.id in _OBJECT_NAMES or node.id.endswith("_instance") or node.id.endswith("_engine")
        if isinstance(node, ast.Attribute):
            if node.attr in _OBJECT_NAMES:
                return True
            node = node.value
        elif isinstance(node, (ast.Subscript, ast.Call)):
            node = node.value if isinstance(node, ast.Subscript) else node.func
        else:
            return False


def _is_literal_type(node: ast.AST) -> bool:
    """``Literal`` (``typing.Literal``): its subscript declares a type's values, it looks nothing up."""
    return (isinstance(node, ast.Name) and node.id == "Literal") or (
        isinstance(node, ast.Attribute) and node.attr == "Literal")


def _is_any(annotation: ast.AST | None) -> bool:
    if isinstance(annotation, ast.Name):
        return annotation.id == "Any"
    if isinstance(annotation, ast.Attribute):
        return annotation.attr == "Any"
    if isinstance(annotation, ast.Constant):
        return annotation.value == "Any"
    return False


def findings_in(tree: ast.AST, path: str, names: set[str]) -> list[Finding]:
    """Every violation in one module's tree."""
    out: list[Finding] = []

    def add(node: ast.AST, what: str) -> None:
        out.append(Finding(path, getattr(node, "lineno", 0), what))

    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for operand in [node.left, *node.comparators]:
                for name in _names_in(operand, names):
                    add(node, f"compares with engine name {name!r}")
        elif isinstance(node, ast.Dict):
            for key in node.keys:
                for name in _names_in(key, names) if key is not None else []:
                    add(key, f"engine name {name!r} as a dict key")
        elif isinstance(node, ast.Subscript) and not _is_literal_type(node.value):
            for name in _names_in(node.slice, names):
                add(node, f"engine name {name!r} as a subscript")
        elif isinstance(node, ast.match_case):
            for sub in ast.walk(node.pattern):
                if isinstance(sub, ast.MatchValue):
                    for name in _names_in(sub.value, names):
                        add(sub, f"engine name {name!r} as a match case")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id in _REFLECTION and node.args and _mentions_object(node.args[0]):
                add(node, f"{node.func.id}() on an engine or instance ({ast.unparse(node.args[0])})")
            if node.func.id == "dict":
                for kw in node.keywords:
                    if kw.arg in names:
                        add(node, f"engine name {kw.arg!r} as a dict key")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            args = node.args
            for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
                if arg.arg in _OBJECT_NAMES and _is_any(arg.annotation):
                    add(arg, f"parameter {arg.arg!r} typed Any (type it with the api/ class it is)")
    return out


def findings(names: set[str]) -> list[Finding]:
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if ENGINES in path.parents:
            continue
        rel = str(path.relative_to(PACKAGE.parent))
        out += findings_in(ast.parse(path.read_text(), rel), rel, names)
    return out


def test_no_engine_name_or_reflection_outside_engines():
    names = set(engine_names())
    assert {"sqlite", "mariadb", "postgres"} <= names, "the registry did not answer as expected"
    found = findings(names)
    assert not found, (f"{len(found)} places outside engines/ know an engine by name or reach into its objects; "
                       "ask a capability of api/ (Dialect, Engine, Instance) instead:\n"
                       + "\n".join(map(str, found)))


def test_the_check_catches_each_kind_of_violation():
    code = '''
def f(instance: Any, engine, es, d):
    if es.engine == "sqlite": pass
    if d.family in ("x", "mariadb"): pass
    table = {"postgres": 1}
    table["mysql"]
    Family = Literal["sqlite", "mariadb"]
    getattr(engine, "spec_notes", None)
    hasattr(state.instance, "proc")
    match d:
        case "external": pass
'''
    found = findings_in(ast.parse(code), "x.py", {"sqlite", "mariadb", "postgres", "mysql", "external"})
    assert [f.line for f in found] == sorted(f.line for f in found)
    assert len(found) == 8, "\n".join(map(str, found))
    kinds = " ".join(f.what for f in found)
    for expected in ("'sqlite'", "'mariadb'", "'postgres' as a dict key", "'mysql' as a subscript",
                     "getattr()", "hasattr()", "match case", "typed Any"):
        assert expected in kinds, expected

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
- a parameter called ``engine``, ``instance`` or ``inst`` typed ``Any`` (what reaches into its attributes);
- an attribute of an instance (``instance``, ``inst``, ``x.instance``, ``*_instance``) that
  :class:`~tdebench.api.engine.Instance` does not declare.

There is no list of exceptions.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

from tdebench.api.engine import Instance
from tdebench.engines import engine_names

PACKAGE = Path(__file__).resolve().parents[2] / "src" / "tdebench"
ENGINES = PACKAGE / "engines"
_OBJECT_NAMES = {"engine", "instance", "inst"}
_REFLECTION = {"getattr", "hasattr", "setattr", "delattr", "vars"}
#: what code outside engines/ may use of an instance: the api class and what its constructor sets
INSTANCE_API = set(dir(Instance)) | {"config", "workdir", "database", "tables", "dialect"}


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


def _is_instance(node: ast.AST) -> bool:
    name = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
    return name in ("instance", "inst") or name.endswith("_instance")


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
        elif isinstance(node, ast.Attribute) and _is_instance(node.value) and node.attr not in INSTANCE_API:
            add(node, f"{ast.unparse(node)}: an instance attribute api/engine.py's Instance does not declare")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            args = node.args
            for arg in [*args.posonlyargs, *args.args, *args.kwonlyargs]:
                if arg.arg in _OBJECT_NAMES and _is_any(arg.annotation):
                    add(arg, f"parameter {arg.arg!r} typed Any (type it with the api/ class it is)")
    return sorted(out, key=lambda f: f.line)


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
    state.instance.pgcluster.stop()
    match d:
        case "external": pass
'''
    found = findings_in(ast.parse(code), "x.py", {"sqlite", "mariadb", "postgres", "mysql", "external"})
    assert len(found) == 9, "\n".join(map(str, found))
    kinds = " ".join(f.what for f in found)
    for expected in ("'sqlite'", "'mariadb'", "'postgres' as a dict key", "'mysql' as a subscript",
                     "getattr()", "hasattr()", "match case", "typed Any", "state.instance.pgcluster: an instance"):
        assert expected in kinds, expected



# workloads present themselves (tdebench.api.presentation): the terminal summary and the report read a run's
# declared presentation (manifest.json, plan.presentation), so they know no workload by name, and the report's own
# words name none of them (a workload's titles, notes and sections come from its declaration)
SHOWN_BY = ("cli", "report")
#: report and summary modules: what they say comes from the workload's declaration
WORDED_BY = ("report", "cli/summary.py", "cli/encrypt_summary.py", "cli/ui.py")
WORKLOAD_WORDS = ("TPC-H", "TPC-C", "sysbench", "power test", "22 queries", "New-Order")


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def workload_findings_in(tree: ast.AST, path: str, names: set[str], words: tuple[str, ...]) -> list[Finding]:
    """Every string (docstrings left out) that is a workload's name, or holds one of ``words``."""
    docs = _docstrings(tree)
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Constant) or not isinstance(node.value, str) or id(node) in docs:
            continue
        if node.value in names:
            out.append(Finding(path, node.lineno, f"names workload {node.value!r}"))
        out += [Finding(path, node.lineno, f"says {w!r}") for w in words if w in node.value]
    return sorted(out, key=lambda f: f.line)


def workload_findings(names: set[str]) -> list[Finding]:
    out = []
    for package in SHOWN_BY:
        for path in sorted((PACKAGE / package).rglob("*.py")):
            rel = str(path.relative_to(PACKAGE))
            worded = any(rel == w or rel.startswith(w + "/") for w in WORDED_BY)
            out += workload_findings_in(ast.parse(path.read_text(), rel), rel, names,
                                        WORKLOAD_WORDS if worded else ())
    return out


def test_no_workload_name_in_cli_or_report():
    from tdebench.workloads import workload_names

    names = set(workload_names())
    assert {"tpch", "tpcc", "sql", "encrypt"} <= names, "the registry did not answer as expected"
    found = workload_findings(names)
    assert not found, (f"{len(found)} places in cli/ or report/ know a workload by name; read what the workload "
                       "declares (tdebench.api.presentation.Presentation, the manifest's plan.presentation) "
                       "instead:\n" + "\n".join(map(str, found)))


def test_the_workload_check_catches_names_and_words():
    code = '''
"""A docstring may say TPC-H."""
def f(key):
    """So may this one: tpcc."""
    if key.test == "tpcc": pass
    TESTS = {"crud": 1}
    note = "The total row covers the 22 queries of the power test."
'''
    found = workload_findings_in(ast.parse(code), "x.py", {"tpcc", "crud"}, WORKLOAD_WORDS)
    assert [f.what for f in found] == ["names workload 'tpcc'", "names workload 'crud'", "says 'power test'",
                                       "says '22 queries'"], found

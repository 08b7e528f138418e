"""The import graph of src/tdebench, read with ast (nothing is imported): no cycle between packages at any level,
and imports flow one way (docs: DESIGN "cli -> runner -> workloads/engines -> api"). Every import counts, also
inside functions and under TYPE_CHECKING: a dependency is one wherever it is written."""

from __future__ import annotations

import ast
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[2] / "src"
PACKAGE = SRC / "tdebench"

# the layers imports flow down through; an import of a higher layer "runs back up"
LAYERS: dict[str, int] = {
    "errors": 0, "encryption": 0, "tdebench": 0, "lifeline": 0, "proctree": 0,
    "api": 1, "sqltext": 1,
    "engines": 2, "measure": 2, "results": 2, "stats": 2, "config": 2,
    "verify": 3, "workloads": 3,
    "runner": 4, "report": 4, "manual": 4, "capture": 4, "decide": 4,
    "cli": 5, "__main__": 5,
}
# packages that may import nothing of these (besides the layers)
FORBIDDEN: dict[str, set[str]] = {
    "engines": {"workloads", "runner", "measure", "verify", "report", "results", "cli", "stats", "manual", "config"},
    "api": set(LAYERS) - {"api", "errors", "encryption", "tdebench"},
    # SQL text is the same whatever engine or workload hands it over
    "sqltext": set(LAYERS) - {"sqltext", "errors", "tdebench"},
}
# the one package that imports sqlglot: every dialect rule (parsing, splitting, rewriting, dialect names) is there
SQLGLOT_OWNER = "tdebench.sqltext"


# an engine package (engines/<name>/) imports only these and itself: the contracts, and what server engines share
ENGINE_MAY_IMPORT = ("tdebench.api", "tdebench.errors", "tdebench.encryption", "tdebench.engines.toolkit",
                     "tdebench.lifeline", "tdebench.proctree")
# the toolkit imports no engine: only the contracts (and SQL text, tdebench.sqltext, shared with workloads)
TOOLKIT_MAY_IMPORT = ("tdebench.api", "tdebench.errors", "tdebench.encryption", "tdebench.sqltext",
                      "tdebench.engines.toolkit", "tdebench.lifeline", "tdebench.proctree")
# circles of modules inside one package (a.py -> b.py -> a.py), at most
MAX_MODULE_CIRCLES = 0


@dataclass(frozen=True)
class Import:
    source: str  # importing module, e.g. tdebench.engines.sqlite.engine
    target: str  # imported module (or name within it), e.g. tdebench.api.engine
    line: int

    def __str__(self) -> str:
        path = self.source.replace(".", "/")
        return f"{path}.py:{self.line} imports {self.target}"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports() -> list[Import]:
    """Every import of a tdebench module in src/tdebench (relative imports resolved)."""
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        source = module_name(path)
        package = source if path.name == "__init__.py" else source.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")[:len(package.split(".")) - (node.level - 1)]
                    targets = [".".join(base + ([node.module] if node.module else []))]
                else:
                    targets = [node.module or ""]
                if node.module is None or targets[0] == package:  # "from . import x": modules x
                    targets = [f"{targets[0]}.{a.name}" for a in node.names]
                elif is_package(targets[0]):  # "from tdebench import encryption": the module, where it is one
                    targets = [f"{targets[0]}.{a.name}" if is_module(f"{targets[0]}.{a.name}") else targets[0]
                               for a in node.names]
            else:
                continue
            out += [Import(source, t, node.lineno) for t in targets if t == "tdebench" or t.startswith("tdebench.")]
    return out


def is_module(dotted: str) -> bool:
    path = SRC / dotted.replace(".", "/")
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def is_package(dotted: str) -> bool:
    return (SRC / dotted.replace(".", "/") / "__init__.py").is_file()


def node_at(dotted: str, parent: str) -> str | None:
    """The child of package ``parent`` that ``dotted`` belongs to: a subpackage, a module of ``parent`` (its own
    modules count as ``parent`` itself below the top level), or None when outside ``parent``."""
    if not dotted.startswith(parent + "."):
        return None
    child = dotted[len(parent) + 1:].split(".")[0]
    if is_package(f"{parent}.{child}") or parent == "tdebench":
        return child
    return "(" + parent.rpartition(".")[2] + ")"


def strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one node (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in edges.get(node, ()):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                out.append(sorted(component))

    for node in sorted(set(edges) | {b for v in edges.values() for b in v}):
        if node not in index:
            visit(node)
    return out


def cycles(parent: str, found: list[Import]) -> list[list[str]]:
    """Strongly connected components (more than one node) among the children of package ``parent``."""
    edges: dict[str, set[str]] = defaultdict(set)
    for imp in found:
        a, b = node_at(imp.source, parent), node_at(imp.target, parent)
        if a and b and a != b:
            edges[a].add(b)
    return strongly_connected(edges)


def module_of(dotted: str) -> str | None:
    """The module or package an import names (``tdebench.api.engine.Config`` -> ``tdebench.api.engine``)."""
    parts = dotted.split(".")
    while parts:
        path = SRC.joinpath(*parts)
        if path.with_suffix(".py").is_file() or (path / "__init__.py").is_file():
            return ".".join(parts)
        parts.pop()
    return None


def module_circles(found: list[Import]) -> list[list[str]]:
    """Circles of modules importing each other inside one package (e.g. a.py -> b.py -> a.py)."""
    edges: dict[str, set[str]] = defaultdict(set)
    for imp in found:
        target = module_of(imp.target)
        if target and target != imp.source and target.rpartition(".")[0] == imp.source.rpartition(".")[0]:
            edges[imp.source].add(target)
    return strongly_connected(edges)


def packages() -> list[str]:
    return sorted(module_name(p) for p in PACKAGE.rglob("__init__.py"))


def top(dotted: str) -> str:
    parts = dotted.split(".")
    return parts[1] if len(parts) > 1 else "tdebench"


@pytest.fixture(scope="module")
def found() -> list[Import]:
    result = imports()
    assert len(result) > 300, "the parser found too few imports to be right"
    return result


@pytest.mark.parametrize("parent", packages())
def test_no_import_cycle_between_packages(parent, found):
    bad = cycles(parent, found)
    involved = [str(i) for i in found for c in bad
                if node_at(i.source, parent) in c and node_at(i.target, parent) in c
                and node_at(i.source, parent) != node_at(i.target, parent)]
    assert not bad, f"import cycles among the packages of {parent}: {bad}; imports: " + "; ".join(involved)


def test_every_package_has_a_layer(found):
    unknown = {top(i.source) for i in found} - set(LAYERS)
    assert not unknown, f"give these packages a layer in LAYERS: {sorted(unknown)}"


def test_imports_flow_down_the_layers(found):
    upward = [str(i) for i in found if LAYERS[top(i.target)] > LAYERS[top(i.source)]]
    assert not upward, f"{len(upward)} imports run back up: " + "; ".join(upward)


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_forbidden_imports(package, found):
    bad = [str(i) for i in found if top(i.source) == package and top(i.target) in FORBIDDEN[package]]
    assert not bad, f"{package}/ must not import {sorted(FORBIDDEN[package])}: " + "; ".join(bad)


def engine_package(dotted: str) -> str | None:
    """``tdebench.engines.<name>`` for a module inside an engine's package (the toolkit is none), else None."""
    parts = dotted.split(".")
    if len(parts) < 3 or parts[:2] != ["tdebench", "engines"] or not is_package(".".join(parts[:3])):
        return None
    return None if parts[2] == "toolkit" else ".".join(parts[:3])


def within(dotted: str, allowed: tuple[str, ...]) -> bool:
    return any(dotted == a or dotted.startswith(a + ".") for a in allowed)


def test_engine_packages_exist():
    names = {engine_package(m) for m in map(module_name, PACKAGE.rglob("*.py"))} - {None}
    assert {"tdebench.engines.sqlite", "tdebench.engines.postgres"} <= names, names


def test_an_engine_package_imports_only_the_contracts_the_toolkit_and_itself(found):
    bad = [str(i) for i in found
           if (own := engine_package(i.source)) and not within(i.target, (*ENGINE_MAY_IMPORT, own))]
    assert not bad, (f"an engine package may import only {', '.join(ENGINE_MAY_IMPORT)} and itself (move what two "
                     "engines share to engines/toolkit/): " + "; ".join(bad))


def test_the_toolkit_imports_no_engine(found):
    bad = [str(i) for i in found
           if i.source.startswith("tdebench.engines.toolkit") and not within(i.target, TOOLKIT_MAY_IMPORT)]
    assert not bad, f"engines/toolkit/ may import only {', '.join(TOOLKIT_MAY_IMPORT)}: " + "; ".join(bad)


def test_no_module_circle_inside_packages(found):
    circles = module_circles(found)
    assert len(circles) <= MAX_MODULE_CIRCLES, (
        f"{len(circles)} circles of modules inside one package (at most {MAX_MODULE_CIRCLES}): {circles}; move what "
        "the modules share into a module of its own")


def test_the_check_sees_a_module_circle_and_a_foreign_engine_import():
    fake = [Import("tdebench.engines.postgres.engine", "tdebench.engines.postgres.column.Column", 1),
            Import("tdebench.engines.postgres.column", "tdebench.engines.postgres.engine", 2),
            Import("tdebench.engines.mysql.engine", "tdebench.engines.postgres.server", 3)]
    assert module_circles(fake) == [["tdebench.engines.postgres.column", "tdebench.engines.postgres.engine"]]
    assert engine_package(fake[2].source) == "tdebench.engines.mysql"
    assert not within(fake[2].target, (*ENGINE_MAY_IMPORT, "tdebench.engines.mysql"))
    assert within("tdebench.engines.toolkit.process", ENGINE_MAY_IMPORT)


def test_the_check_sees_a_cycle_and_an_upward_import():
    """The analysis itself: a made-up graph with a cycle between two packages is caught."""
    fake = [Import("tdebench.engines.x", "tdebench.workloads.y", 1), Import("tdebench.workloads.y", "tdebench.engines.x", 2)]
    assert cycles("tdebench", fake) == [["engines", "workloads"]]
    assert [i for i in fake if LAYERS[top(i.target)] > LAYERS[top(i.source)]] == [fake[0]]


def library_imports(library: str) -> list[Import]:
    """Every import of ``library`` (or a module in it) in src/tdebench."""
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            out += [Import(module_name(path), n, node.lineno) for n in names
                    if n == library or n.startswith(library + ".")]
    return out


def sqlglot_outside_its_owner(found: list[Import]) -> list[str]:
    return [str(i) for i in found if not within(i.source, (SQLGLOT_OWNER,))]


def test_only_the_sql_text_package_imports_sqlglot():
    found = library_imports("sqlglot")
    assert len({i.source for i in found}) >= 3, "the check found too few imports of sqlglot to be right"
    bad = sqlglot_outside_its_owner(found)
    assert not bad, (f"only {SQLGLOT_OWNER} may import sqlglot (parse, split, rewrite and name dialects there; "
                     "import tdebench.sqltext.tree for the node types): " + "; ".join(bad))


def test_the_check_sees_sqlglot_imported_elsewhere():
    fake = [Import("tdebench.capture.redact", "sqlglot.exp", 1), Import("tdebench.sqltext.normal", "sqlglot", 2)]
    assert sqlglot_outside_its_owner(fake) == ["tdebench/capture/redact.py:1 imports sqlglot.exp"]

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
    "errors": 0, "encryption": 0, "tdebench": 0, "sqltext": 0, "sqlite_sql": 0, "serverlog": 0, "sqlnormal": 0,
    "api": 1,
    "engines": 2, "measure": 2, "results": 2, "stats": 2, "config": 2,
    "verify": 3, "workloads": 3,
    "runner": 4, "report": 4, "manual": 4, "capture": 4,
    "cli": 5, "__main__": 5,
}
# packages that may import nothing of these (besides the layers)
FORBIDDEN: dict[str, set[str]] = {
    "engines": {"workloads", "runner", "measure", "verify", "report", "results", "cli", "stats", "manual", "config"},
    "api": set(LAYERS) - {"api", "errors", "encryption", "tdebench"},
}


@dataclass(frozen=True)
class Import:
    source: str  # importing module, e.g. tdebench.engines.sqlite
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
            else:
                continue
            out += [Import(source, t, node.lineno) for t in targets if t == "tdebench" or t.startswith("tdebench.")]
    return out


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


def cycles(parent: str, found: list[Import]) -> list[list[str]]:
    """Strongly connected components (more than one node) among the children of package ``parent``."""
    edges: dict[str, set[str]] = defaultdict(set)
    for imp in found:
        a, b = node_at(imp.source, parent), node_at(imp.target, parent)
        if a and b and a != b:
            edges[a].add(b)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(node: str) -> None:  # Tarjan
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


def test_the_check_sees_a_cycle_and_an_upward_import():
    """The analysis itself: a made-up graph with a cycle between two packages is caught."""
    fake = [Import("tdebench.engines.x", "tdebench.workloads.y", 1), Import("tdebench.workloads.y", "tdebench.engines.x", 2)]
    assert cycles("tdebench", fake) == [["engines", "workloads"]]
    assert [i for i in fake if LAYERS[top(i.target)] > LAYERS[top(i.source)]] == [fake[0]]

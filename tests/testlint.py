"""Tests that cannot fail, found with ``ast`` (tests/unit/test_tests_can_fail.py runs it over tests/):

- a test with no reachable check: no ``assert``, no ``pytest.raises``/``warns``/``fail``, no call of a helper that
  checks (a function of the same module or of another ``tests`` module that does one of these, followed
  transitively, or an ``assert_*`` function), no command run with ``check=True``; what follows an unconditional
  ``return``, ``raise`` or ``pytest.skip``/``xfail`` does not count;
- a test whose every check passes when its loops run zero times: its assertions sit inside ``for`` loops (or are
  ``all(...)``) over collections that may be empty, or only say that nothing the loops looked at was wrong
  (``assert not found`` of a list only the loops fill). A collection is known to be non-empty when it is a
  non-empty literal, a ``range`` of constants, a pass-through (``sorted``, ``zip``, ...) of one, a constant of the
  test module or of the package holding one, a fixture or parametrized value (or a helper's view of one), the
  result of a helper that asserts, or when an assertion of the test names it;
- ``assert A and B or C`` without brackets: Python reads ``(A and B) or C``, so C alone passes it.

A test that checks by not raising, and is right that way, is named in the caller's allowlist with the reason.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Sized
from dataclasses import dataclass, field
from pathlib import Path

#: pytest calls that are checks
CHECK_CALLS = {"raises", "warns", "fail", "deprecated_call"}
#: pytest calls after which, unconditionally, nothing runs
STOP_CALLS = {"skip", "xfail", "exit"}
#: subprocess functions that raise when the command fails
CHECKED_SUBPROCESS = {"check_call", "check_output"}
#: builtins and wrappers that pass a collection through: an iterable of them is as empty as their argument
PASS_THROUGH = {"enumerate", "zip", "sorted", "reversed", "list", "tuple", "set", "iter"}


@dataclass
class Module:
    """One parsed test module: its functions (``name`` or ``Class.name``), imports and module constants."""

    name: str
    path: Path
    tree: ast.Module
    source: str
    functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = field(default_factory=dict)
    imported: dict[str, tuple[str, str]] = field(default_factory=dict)  # local name -> (module, attribute or "")
    constants: dict[str, ast.expr] = field(default_factory=dict)


def module_name(path: Path, root: Path) -> str:
    return ".".join(path.relative_to(root).with_suffix("").parts)


def parse_module(path: Path, root: Path) -> Module:
    source = path.read_text(encoding="utf-8")
    tree = ast.parse(source, str(path))
    mod = Module(module_name(path, root), path, tree, source)
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            mod.functions[node.name] = node
        elif isinstance(node, ast.ClassDef):
            for item in node.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    mod.functions[f"{node.name}.{item.name}"] = item
        elif isinstance(node, ast.ImportFrom) and node.module:
            for alias in node.names:
                mod.imported[alias.asname or alias.name] = (node.module, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                mod.imported[alias.asname or alias.name.split(".")[0]] = (alias.name, "")
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    mod.constants[target.id] = node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            mod.constants[node.target.id] = node.value
    return mod


class Index:
    """Every module under a tests folder, to follow helper calls into them."""

    def __init__(self, modules: list[Module]) -> None:
        self.modules = {m.name: m for m in modules}
        self._checks: dict[tuple[str, str], bool] = {}

    def resolve(self, mod: Module, call: ast.Call, owner: str | None) -> tuple[Module, str] | None:
        """The test-suite function a call reaches: a function of ``mod``, a method of the test's class
        (``self.x()``), or a function imported from (or reached through) another ``tests`` module."""
        func = call.func
        if isinstance(func, ast.Name):
            if func.id in mod.functions:
                return mod, func.id
            module, attr = mod.imported.get(func.id, ("", ""))
            target = self.modules.get(module)
            return (target, attr) if target and attr in target.functions else None
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            base = func.value.id
            if base == "self" and owner and f"{owner}.{func.attr}" in mod.functions:
                return mod, f"{owner}.{func.attr}"
            module, attr = mod.imported.get(base, ("", ""))
            target = self.modules.get(f"{module}.{attr}" if attr else module)
            return (target, func.attr) if target and func.attr in target.functions else None
        return None

    def checks(self, mod: Module, name: str) -> bool:
        """Whether function ``name`` of ``mod`` reaches a check (transitively through the helpers it calls)."""
        key = (mod.name, name)
        if key not in self._checks:
            self._checks[key] = False  # a recursion is not a check by itself
            owner = name.split(".")[0] if "." in name else None
            self._checks[key] = body_checks(self, mod, mod.functions[name].body, owner)
        return self._checks[key]


def _pytest_call(node: ast.AST, names: set[str]) -> bool:
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in names
            and isinstance(node.func.value, ast.Name) and node.func.value.id == "pytest")


def _is_check_call(index: Index, mod: Module, node: ast.Call, owner: str | None, commands: bool = True) -> bool:
    """Whether a call checks: pytest.raises & co, an ``assert_*`` function, a helper that checks, and (with
    ``commands``) a command run with ``check=True``, which raises when the command fails."""
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if _pytest_call(node, CHECK_CALLS) or name.startswith("assert_"):
        return True
    if commands and (name in CHECKED_SUBPROCESS or any(
            k.arg == "check" and isinstance(k.value, ast.Constant) and k.value.value is True for k in node.keywords)):
        return True
    target = index.resolve(mod, node, owner)
    return target is not None and index.checks(*target)


def _stops(stmt: ast.stmt) -> bool:
    """An unconditional end of the test: return, raise, pytest.skip()/xfail()."""
    if isinstance(stmt, (ast.Return, ast.Raise)):
        return True
    return isinstance(stmt, ast.Expr) and _pytest_call(stmt.value, STOP_CALLS)


def body_checks(index: Index, mod: Module, body: list[ast.stmt], owner: str | None) -> bool:
    """Whether the statements (in order, up to an unconditional stop) hold a check anywhere inside them."""
    for stmt in body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Assert):
                return True
            if isinstance(node, ast.Call) and _is_check_call(index, mod, node, owner):
                return True
            if isinstance(node, (ast.With, ast.AsyncWith)) and any(
                    _pytest_call(item.context_expr, CHECK_CALLS) for item in node.items):
                return True
        if _stops(stmt):
            return False
    return False


def _root_name(node: ast.expr) -> str | None:
    """``x`` of ``x``, ``x.attr``, ``x[i]``, ``x.method()``: the name a collection is reached by."""
    while True:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, (ast.Attribute, ast.Subscript, ast.Starred)):
            node = node.value
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            node = node.func.value
        else:
            return None


def _imported_constant_filled(module: str, attr: str) -> bool:
    """Whether a constant imported from the package (e.g. ``DIALECTS``) holds something: read from the module
    itself, since tdebench's own constants are data, not computed per test."""
    if not attr or module.split(".")[0] == "tests":
        return False
    try:
        value = getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError):
        return False
    return not callable(value) and isinstance(value, Sized) and len(value) > 0


def never_empty(index: Index, mod: Module, node: ast.expr, owner: str | None, depth: int = 0) -> bool:
    """Whether an iterable cannot be empty: a non-empty literal, range of constants, a pass-through of one, a
    module constant of that kind, a dict's items/keys/values of one, or what a checking helper returns."""
    if depth > 5:
        return False
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):  # [*a, *b] is as empty as a and b
        return any(not isinstance(e, ast.Starred) or never_empty(index, mod, e.value, owner, depth + 1)
                   for e in node.elts)
    if isinstance(node, ast.Dict):
        return bool(node.keys)
    if isinstance(node, ast.Constant):
        return bool(node.value)
    if isinstance(node, ast.Name):
        value = mod.constants.get(node.id)
        if value is None and node.id in mod.imported:
            return _imported_constant_filled(*mod.imported[node.id])
        return value is not None and never_empty(index, mod, value, owner, depth + 1)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in mod.imported:
        module, attr = mod.imported[node.value.id]  # e.g. schema.DIALECTS after "from ... import schema"
        return _imported_constant_filled(f"{module}.{attr}" if attr else module, node.attr)
    if isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Name) and func.id == "range":
            args = node.args
            return all(isinstance(a, ast.Constant) for a in args) and len(range(*(a.value for a in args))) > 0
        if isinstance(func, ast.Name) and func.id in PASS_THROUGH and node.args:
            return all(never_empty(index, mod, a, owner, depth + 1) for a in node.args)
        if isinstance(func, ast.Attribute) and func.attr in ("items", "keys", "values"):
            return never_empty(index, mod, func.value, owner, depth + 1)
        target = index.resolve(mod, node, owner)
        return target is not None and index.checks(*target)
    return False


def _named_in_asserts(func: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name
               for a in ast.walk(func) if isinstance(a, ast.Assert) for n in ast.walk(a.test))


def _aliases(func: ast.AST) -> dict[str, ast.expr]:
    """Local names bound by a plain assignment in the function (to follow ``paths = sorted(...)``)."""
    out: dict[str, ast.expr] = {}
    for node in ast.walk(func):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            out[node.targets[0].id] = node.value
    return out


def _all_over(node: ast.AST) -> ast.expr | None:
    """The collection of ``all(x for x in C)`` (vacuously true when C is empty), else None."""
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "all" and node.args
            and isinstance(node.args[0], (ast.GeneratorExp, ast.ListComp))):
        return node.args[0].generators[0].iter
    return None


def _empty_literal(node: ast.expr | None) -> bool:
    if isinstance(node, (ast.List, ast.Tuple, ast.Set, ast.Dict)):
        return not (node.keys if isinstance(node, ast.Dict) else node.elts)
    if isinstance(node, ast.Constant):
        return node.value in ("", 0, None, False)
    return (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and not node.args
            and node.func.id in ("list", "dict", "set", "Counter"))


class _Loops:
    """The loops of one test whose collections may be empty, and whether its checks all pass when they are."""

    def __init__(self, index: Index, mod: Module, func: ast.FunctionDef | ast.AsyncFunctionDef,
                 owner: str | None) -> None:
        self.index, self.mod, self.func, self.owner = index, mod, func, owner
        self.aliases = _aliases(func)
        self.fixtures = {a.arg for a in func.args.args} - {"self"}
        self.parents = {child: parent for parent in ast.walk(func) for child in ast.iter_child_nodes(parent)}
        self.loops = [n for n in ast.walk(func) if isinstance(n, (ast.For, ast.AsyncFor))
                      and self.maybe_empty(n.iter)]
        self.alls = [n for a in ast.walk(func) if isinstance(a, ast.Assert) for n in ast.walk(a.test)
                     if (c := _all_over(n)) is not None and self.maybe_empty(c)]

    def maybe_empty(self, iterable: ast.expr) -> bool:
        value = self.aliases.get(iterable.id, iterable) if isinstance(iterable, ast.Name) else iterable
        if never_empty(self.index, self.mod, value, self.owner):
            return False
        name = _root_name(iterable)
        if name in self.fixtures or self.from_fixture(value):
            return False  # a fixture's or a parametrization's value: built (and checked) where it is declared
        return not (name and _named_in_asserts(self.func, name))

    def from_fixture(self, value: ast.expr) -> bool:
        """A helper's view of a fixture, e.g. ``_not_gocryptfs(loaded)``."""
        return isinstance(value, ast.Call) and any(
            _root_name(a) in self.fixtures for a in value.args if isinstance(a, ast.expr))

    def inside_loop(self, node: ast.AST) -> bool:
        while node in self.parents:
            node = self.parents[node]
            if node in self.loops:
                return True
        return False

    def filled_only_in_loops(self, name: str) -> bool:
        """``name`` starts empty and only the maybe-empty loops change it (``found += ...``, ``found.append``)."""
        starts_empty = False
        for node in ast.walk(self.func):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
                node, (ast.AugAssign, ast.AnnAssign)) else []
            for target in targets:
                if isinstance(target, ast.Name) and target.id == name:
                    if isinstance(node, ast.Assign) and _empty_literal(node.value) and not self.inside_loop(node):
                        starts_empty = True
                    elif not self.inside_loop(node):
                        return False
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == name
                    and not self.inside_loop(node)):
                return False
        return starts_empty

    def vacuous(self, test: ast.expr) -> bool:
        """Whether an assertion outside the loops passes whenever they run zero times."""
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
            return all(self.vacuous(v) for v in test.values)
        collection = _all_over(test)
        if collection is not None:
            return self.maybe_empty(collection)
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            operand = test.operand
            if isinstance(operand, ast.Call) and isinstance(operand.func, ast.Name) and operand.func.id == "any":
                inner = operand.args[0] if operand.args else None
                if isinstance(inner, (ast.GeneratorExp, ast.ListComp)):
                    return self.maybe_empty(inner.generators[0].iter)
            return isinstance(operand, ast.Name) and self.filled_only_in_loops(operand.id)
        if isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq):
            left, right = test.left, test.comparators[0]
            if isinstance(left, ast.Call) and isinstance(left.func, ast.Name) and left.func.id == "len" and left.args:
                left = left.args[0]
            return isinstance(left, ast.Name) and _empty_literal(right) and self.filled_only_in_loops(left.id)
        return False

    def real_check_outside(self) -> bool:
        """A check outside the maybe-empty loops that can fail when they run zero times."""
        for node in ast.walk(self.func):
            if self.inside_loop(node):
                continue
            if isinstance(node, ast.Assert) and not self.vacuous(node.test):
                return True
            # a command that must succeed (e.g. the one that lists the collection) says nothing of its size
            if isinstance(node, ast.Call) and _is_check_call(self.index, self.mod, node, self.owner, commands=False):
                return True
            if isinstance(node, (ast.With, ast.AsyncWith)) and any(
                    _pytest_call(item.context_expr, CHECK_CALLS) for item in node.items):
                return True
        return False


def vacuous_loops(index: Index, mod: Module, func: ast.FunctionDef | ast.AsyncFunctionDef,
                  owner: str | None) -> list[ast.AST]:
    """The loops over maybe-empty collections of a test whose every check passes when they run zero times
    (its assertions sit inside them, or only say that nothing they looked at was wrong)."""
    loops = _Loops(index, mod, func, owner)
    if not (loops.loops or loops.alls) or loops.real_check_outside():
        return []
    return [*loops.loops, *loops.alls]


def unbracketed_and_in_or(mod: Module, func: ast.AST) -> list[ast.Assert]:
    """Asserts like ``assert A and B or C``: Python reads ``(A and B) or C``, so C alone passes the test (an
    ``and`` written in brackets inside an ``or`` is read as written)."""
    lines = mod.source.splitlines()
    found = []
    for node in ast.walk(func):
        if not (isinstance(node, ast.Assert) and isinstance(node.test, ast.BoolOp) and isinstance(node.test.op, ast.Or)):
            continue
        for value in node.test.values:
            if isinstance(value, ast.BoolOp) and isinstance(value.op, ast.And):
                before = lines[value.lineno - 1][:value.col_offset].rstrip()
                if not before.endswith("("):
                    found.append(node)
                    break
    return found


@dataclass(frozen=True)
class Finding:
    """One test that cannot fail, and why."""

    where: str  # path:line test name
    why: str

    def __str__(self) -> str:
        return f"{self.where}: {self.why}"


def collected_tests(mod: Module) -> list[tuple[str, ast.FunctionDef | ast.AsyncFunctionDef, str | None]]:
    """(qualified name, node, class name) of every test function pytest collects from ``mod``."""
    out = []
    for name, node in mod.functions.items():
        owner, _, short = name.rpartition(".")
        if short.startswith("test") and (not owner or owner.startswith("Test")):
            out.append((name, node, owner or None))
    return out


def find(root: Path, folder: Path, allowed: dict[str, str]) -> list[Finding]:
    """Every test under ``folder`` (modules under ``root``, the folder holding the ``tests`` package) that
    cannot fail; ``allowed`` maps ``path::test`` to why a test without a check of its own is right."""
    modules = [parse_module(p, root) for p in sorted(folder.rglob("*.py"))]
    index = Index(modules)
    out: list[Finding] = []
    for mod in modules:
        if not mod.path.name.startswith("test_"):
            continue
        for name, node, owner in collected_tests(mod):
            key = f"{mod.path.relative_to(root)}::{name}"
            if key in allowed:
                continue
            where = f"{mod.path.relative_to(root)}:{node.lineno} {name}"
            if not body_checks(index, mod, node.body, owner):
                out.append(Finding(where, "no reachable assertion (assert, pytest.raises, a checking helper)"))
            for loop in vacuous_loops(index, mod, node, owner):
                out.append(Finding(f"{mod.path.relative_to(root)}:{loop.lineno} {name}",
                                   "loops over a collection that may be empty and that no assertion names"))
            for bad in unbracketed_and_in_or(mod, node):
                out.append(Finding(f"{mod.path.relative_to(root)}:{bad.lineno} {name}",
                                   "'assert A and B or C' passes on C alone: bracket what is meant"))
    return out

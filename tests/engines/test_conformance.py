"""The engine conformance kit (tests/engines/kit.py) applied to every registered engine, plus the test-only
fake engine and the minimal example of docs/adding-an-engine.md: a new engine that does not pass fails the
suite. Engines listed in ``kit.OWN_CLASS`` get the kit through their own test module's class (which adds checks
on the same loaded instances); this module checks that they do."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tdebench.engines import engine_names
from tests.engines import kit
from tests.fakes import engine as fake_engine
from tests.fakes import examples

ROOT = Path(__file__).resolve().parents[2]
TEST_ONLY = {"fake": fake_engine.registered, "minimal": examples.minimal_engine}


def _class_name(name: str) -> str:
    return "TestKit" + "".join(part.capitalize() for part in name.split("_"))


def _registered_for(name: str):
    """A class fixture that keeps a test-only engine registered while its kit runs."""
    @pytest.fixture(scope="class", autouse=True)
    @classmethod
    def registered(cls):
        with TEST_ONLY[name]():
            yield
    return registered


for _name in [*engine_names(), *TEST_ONLY]:
    if _name in kit.OWN_CLASS:
        continue
    _attrs = {"engine_name": _name, "__module__": __name__}
    if _name in TEST_ONLY:
        _attrs["_registered"] = _registered_for(_name)
    globals()[_class_name(_name)] = type(_class_name(_name), (kit.EngineKit,), _attrs)


@pytest.mark.parametrize("name", sorted(kit.OWN_CLASS))
def test_engines_with_their_own_kit_class_have_one(name):
    """The module named in OWN_CLASS subclasses kit_for("<name>") in a Test* class (read, not imported: the
    module may skip itself where the DBMS is missing)."""
    tree = ast.parse((ROOT / kit.OWN_CLASS[name]).read_text())
    bases = [ast.unparse(b) for node in ast.walk(tree) if isinstance(node, ast.ClassDef) and node.name.startswith("Test")
             for b in node.bases]
    assert f"kit_for('{name}')" in bases or f'kit_for("{name}")' in bases, bases


def test_every_registered_engine_faces_the_kit():
    covered = {cls.engine_name for cls in globals().values() if isinstance(cls, type) and
               issubclass(cls, kit.EngineKit) and cls.__name__.startswith("TestKit")} | set(kit.OWN_CLASS)
    assert set(engine_names()) | set(TEST_ONLY) <= covered


@pytest.mark.parametrize("name", engine_names())
def test_every_registered_engine_has_its_docs_page(name):
    """docs/adding-an-engine.md step 4: what the engine's specs encrypt, for its users."""
    page = ROOT / "docs" / "engines" / f"{name}.md"
    assert page.is_file(), (f"engine {name!r} has no docs/engines/{name}.md: write its specs, what each encrypts and "
                            "what it leaves plaintext (docs/adding-an-engine.md)")


@pytest.mark.parametrize("name", engine_names())
def test_every_registered_engine_is_a_package_of_its_own(name):
    """The registry points at engines/<name>/engine.py (docs/adding-an-engine.md step 3); an engine declared a mode
    of another engine's package (``MODES``, e.g. galera of mariadb) at a module of that package."""
    from tdebench.engines import _REGISTRY, MODES

    target = _REGISTRY[name]
    assert isinstance(target, str), target
    if name in MODES:
        package = MODES[name]
        module = target.partition(":")[0]
        assert module.startswith(f"tdebench.engines.{package}.") and package in _REGISTRY, target
        assert (ROOT / "src" / Path(*module.split("."))).with_suffix(".py").is_file()
        return
    assert target.startswith(f"tdebench.engines.{name}.engine:"), target
    assert (ROOT / "src" / "tdebench" / "engines" / name / "engine.py").is_file()

"""The plug-in examples of docs/examples/plugins (docs/adding-an-engine.md, docs/adding-a-workload.md), imported
from their files and registered while a test needs them."""

from __future__ import annotations

import contextlib
import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

from tdebench import engines, workloads

PLUGINS = Path(__file__).resolve().parents[2] / "docs" / "examples" / "plugins"


def load(stem: str) -> ModuleType:
    """docs/examples/plugins/<stem>.py as a module (imported once per process)."""
    name = f"tdebench_example_{stem}"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, PLUGINS / f"{stem}.py")
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # pydantic and dataclasses look their module up
        spec.loader.exec_module(module)
    return sys.modules[name]


@contextlib.contextmanager
def minimal_engine() -> Iterator[None]:
    engines.register("minimal", load("minimal_engine").MinimalEngine)
    try:
        yield
    finally:
        engines.unregister("minimal")


@contextlib.contextmanager
def minimal_workload() -> Iterator[None]:
    module = load("minimal_workload")
    workloads.register("minimal", module.MinimalWorkload, module.MinimalOptions)
    try:
        yield
    finally:
        workloads.unregister("minimal")

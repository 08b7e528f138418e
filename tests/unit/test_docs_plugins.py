"""docs/adding-an-engine.md and docs/adding-a-workload.md show code of their examples (docs/examples/plugins), which
the conformance kits run (tests/engines/test_conformance.py, tests/unit/test_workload_kit.py): every code block
of a page must be in its example file as written, so the page cannot drift from the code the kits test."""

from __future__ import annotations

import re
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = {"adding-an-engine.md": "minimal_engine.py", "adding-a-workload.md": "minimal_workload.py"}


@pytest.mark.parametrize("page, example", sorted(PAGES.items()))
def test_code_blocks_are_the_example(page, example):
    text = (ROOT / "docs" / page).read_text()
    source = (ROOT / "docs" / "examples" / "plugins" / example).read_text()
    blocks = [textwrap.dedent(b) for b in re.findall(r"```python\n(.*?)```", text, re.S)]
    assert blocks, f"{page} shows no code"
    for block in blocks:
        assert block in source, f"{page}: this block is not in {example}:\n{block}"
    assert f"examples/plugins/{example}" in text


def test_the_kits_run_the_examples():
    kit = (ROOT / "tests" / "engines" / "test_conformance.py").read_text()
    workloads = (ROOT / "tests" / "unit" / "test_workload_kit.py").read_text()
    assert '"minimal": examples.minimal_engine' in kit
    assert '"minimal"]' in workloads and "examples.minimal_workload()" in workloads

"""The README agrees with the code: its option list of ``tdebench run`` is the one generated from the option
definitions (``python3 -m tdebench.cli.docgen`` rewrites it), ``--workload``'s help comes from the workload
registry, and the run directory it describes (manifest version, measurements.csv columns) is the one the code
writes, as is docs/result-format.md's example manifest."""

from __future__ import annotations

import json
import re
from pathlib import Path

import typer

from tdebench.api.manifest import SCHEMA_VERSION
from tdebench.api.measurement import COLUMNS
from tdebench.cli import docgen
from tdebench.cli.app import app
from tdebench.workloads import workload_names

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"


def _run_params() -> list:
    return typer.main.get_command(app).commands["run"].params  # type: ignore[attr-defined]


def test_the_readme_option_list_is_generated_from_the_options():
    diff = docgen.drift(README.read_text(encoding="utf-8"))
    assert not diff, "README.md's option list of `run` differs from the code: run `python3 -m tdebench.cli.docgen`\n" \
        + "\n".join(diff)


def test_the_generated_list_has_every_option_of_run():
    section = docgen.generated_section()
    options = [o for p in _run_params() for o in (*p.opts, *p.secondary_opts) if o.startswith("--")]
    assert len(options) > 50 and "--page-source" in options, options
    missing = [o for o in options if f"`{o}" not in section]
    assert not missing, missing


def test_the_check_catches_a_planted_drift():
    readme = README.read_text(encoding="utf-8")
    assert docgen.drift(docgen.regenerate(readme)) == []
    planted = readme.replace("- `--rows N`: crud: rows in the table.\n", "")  # an option the README lost
    assert planted != readme
    assert any(line == "+- `--rows N`: crud: rows in the table." for line in docgen.drift(planted))
    changed = readme.replace("[default: 3]", "[default: 5]", 1)  # a default typed by hand
    assert any(line.startswith("-") and "[default: 5]" in line for line in docgen.drift(changed))


def test_the_generator_rewrites_only_its_section(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(f"before\n\n{docgen.BEGIN}\n- stale\n{docgen.END}\n\nafter\n")
    assert docgen.main(["--check", str(readme)]) == 1
    assert docgen.main([str(readme)]) == 0
    text = readme.read_text()
    assert text.startswith("before\n\n") and text.endswith("\n\nafter\n") and "- stale" not in text
    assert docgen.main(["--check", str(readme)]) == 0


def test_workload_help_comes_from_the_registry():
    help_text = next(p for p in _run_params() if p.name == "workload").help
    names = workload_names()
    assert "encrypt" in names and len(names) >= 9, names
    for name in names:
        assert re.search(rf"\b{name}\b", help_text), (name, help_text)
    assert "tpch (default)" in help_text


def test_the_readme_run_directory_is_the_one_the_code_writes():
    text = README.read_text(encoding="utf-8")
    versions = re.findall(r"schema_version (\d+)", text)
    assert versions == [str(SCHEMA_VERSION)], versions
    columns = next(line.strip() for line in text.splitlines() if line.strip().startswith("run_id,block,"))
    assert columns.split(",") == list(COLUMNS), columns


def test_result_format_example_manifest_has_the_current_version():
    text = (ROOT / "docs" / "result-format.md").read_text(encoding="utf-8")
    example = re.search(r"## manifest\.json\s+```json\n(.*?)```", text, re.S)
    assert example, "docs/result-format.md has no example manifest"
    assert json.loads(example.group(1))["schema_version"] == SCHEMA_VERSION
    assert text.startswith(f"# Run directory format (schema_version {SCHEMA_VERSION})")

"""Every test can fail: none without a reachable check, none whose checks all sit in a loop over a collection that
may be empty, no ``assert A and B or C`` (tests/testlint.py says what counts). The planted tests below show what
the check catches and what it lets through."""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.testlint import find

ROOT = Path(__file__).resolve().parents[2]

#: tests without a check of their own that are right as they are: path::test -> why
ALLOWED = {
    "tests/unit/test_reproduction_files.py::test_reproduction_file_is_valid":
        "tdebench's own validation raises UsageError for a bad experiment file: not raising is the check",
}


def test_every_test_can_fail():
    found = find(ROOT, ROOT / "tests", ALLOWED)
    assert not found, "tests that cannot fail (tests/testlint.py):\n" + "\n".join(map(str, found))


def test_the_allowlist_names_tests_that_exist():
    for key in ALLOWED:
        path, _, name = key.partition("::")
        assert f"def {name}(" in (ROOT / path).read_text(), f"{key} is gone: remove it from ALLOWED"


def _planted(tmp_path: Path, code: str, helper: str = "") -> list[str]:
    """The findings of the check on one planted test module (and a helper module beside it)."""
    folder = tmp_path / "tests"
    folder.mkdir()
    (folder / "__init__.py").write_text("")
    (folder / "helpers.py").write_text(textwrap.dedent(helper))
    (folder / "test_planted.py").write_text(textwrap.dedent(code))
    return [f.where.split(" ", 1)[1] for f in find(tmp_path, folder, {})]


def test_a_planted_test_that_asserts_nothing_is_caught(tmp_path):
    assert _planted(tmp_path, """
        import pytest

        def test_nothing():
            x = 1 + 1

        def test_only_after_a_skip():
            pytest.skip("never")
            assert False

        def test_asserts():
            assert 1 + 1 == 2
        """) == ["test_nothing", "test_only_after_a_skip"]


def test_a_planted_loop_over_an_empty_collection_is_caught(tmp_path):
    assert _planted(tmp_path, """
        from pathlib import Path

        def test_loop_over_a_missing_folder():
            for path in Path("nosuch").glob("*.sql"):
                assert path.read_text()

        def test_offenders_collected_over_nothing():
            found = []
            for name in Path("nosuch").iterdir():
                found.append(name)
            assert not found

        def test_all_over_nothing():
            assert all(p.exists() for p in Path("nosuch").glob("*"))

        def test_a_loop_whose_collection_is_checked():
            paths = sorted(Path("nosuch").glob("*.sql"))
            assert len(paths) == 22
            for path in paths:
                assert path.read_text()

        def test_a_loop_over_a_literal():
            for n in (1, 2, 3):
                assert n

        def test_a_loop_beside_another_check():
            for path in Path("nosuch").glob("*.sql"):
                assert path.read_text()
            assert 2 > 1
        """) == ["test_loop_over_a_missing_folder", "test_offenders_collected_over_nothing", "test_all_over_nothing"]


def test_helpers_that_check_count_and_and_or_must_be_bracketed(tmp_path):
    assert _planted(tmp_path, """
        import pytest
        from tests.helpers import check_run, no_check

        def test_through_a_helper():
            check_run(1)

        def test_through_a_helper_that_checks_nothing():
            no_check(1)

        def test_raises():
            with pytest.raises(ValueError):
                int("x")

        def test_unbracketed(text="a"):
            assert "Traceback" not in text and "fix" in text or "--help" in text

        def test_bracketed(text="a"):
            assert "Traceback" not in text and ("fix" in text or "--help" in text)
        """, helper="""
        def check_run(value):
            assert value == 1

        def no_check(value):
            return value
        """) == ["test_through_a_helper_that_checks_nothing", "test_unbracketed"]

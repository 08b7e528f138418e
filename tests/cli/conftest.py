"""Fixtures of the CLI tests."""

from tests.cli.refusal import no_work_possible  # noqa: F401 - a fixture, used by name

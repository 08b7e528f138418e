"""Whether an engine can run on this machine, for the skip marks of the tests that need its server."""

from __future__ import annotations

from tdebench.engines import get_engine
from tdebench.errors import EnvironmentProblem


def engine_missing(name: str) -> str:
    """Why engine ``name`` cannot run here, in its one line ("" when it can)."""
    try:
        get_engine(name).check_available()
    except EnvironmentProblem as exc:
        return exc.one_line()
    return ""

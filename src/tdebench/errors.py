"""One error family. Every error says what is wrong and how to fix it.

Only ``tdebench.cli`` turns these into exit codes: ``UsageError`` -> 2 (bad input),
``EnvironmentProblem`` -> 3 (missing binary, unreachable server, full disk, ...),
``RunFailed`` -> 1 (the run happened but something in it failed, e.g. answers differ).
"""

from __future__ import annotations


class TdebenchError(Exception):
    """Base class: ``problem`` says what is wrong, ``fix`` how to fix it."""

    exit_code = 1

    def __init__(self, problem: str, fix: str = "", tried: list[str] | None = None) -> None:
        self.problem = problem
        self.fix = fix
        self.tried = list(tried or [])
        super().__init__(self.one_line())

    def one_line(self) -> str:
        """The problem, what was tried and the fix on a single line."""
        text = self.problem.rstrip(".")
        if self.tried:
            text += f" (tried: {', '.join(self.tried)})"
        if self.fix:
            text += f"; fix: {self.fix}"
        return text


class UsageError(TdebenchError):
    """The user asked for something invalid (bad option, spec, file)."""

    exit_code = 2


class EnvironmentProblem(TdebenchError):
    """The machine cannot do what was asked (binary missing, disk full, server down)."""

    exit_code = 3


class RunFailed(TdebenchError):
    """The run completed but a check failed (answers differ, verification failed)."""

    exit_code = 1

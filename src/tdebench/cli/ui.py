"""Rich progress bars and messages for a run (on stderr, so stdout keeps the summary)."""

from __future__ import annotations

import time
from collections.abc import Callable

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from tdebench.encryption import redact
from tdebench.engines.toolkit import process
from tdebench.api.events import RunListener
from tdebench.runner.progress import human_duration


class RichListener(RunListener):
    """Shows each phase of a run as a progress bar; when the output is not a terminal (a log file, CI), where
    bars are not drawn, one timestamped line per phase started and ended instead, with its duration."""

    def __init__(self, console: Console, clock: Callable[[], float] = time.time) -> None:
        self.console = console
        self.lines = not console.is_terminal
        self._clock = clock
        self.started: dict[str, tuple[str, float]] = {}
        self.progress = Progress(
            SpinnerColumn(), TextColumn("[progress.description]{task.description}"), BarColumn(),
            MofNCompleteColumn(), TimeElapsedColumn(), console=console, transient=True,
        )
        self.tasks: dict[str, int] = {}

    def __enter__(self) -> "RichListener":
        self.progress.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.progress.stop()

    def message(self, text: str) -> None:
        if text.startswith("WARNING:"):  # e.g. a label the server does not confirm: loud, unwrapped, as is
            self.progress.console.print(redact(text), style="bold red", markup=False, highlight=False, soft_wrap=True)
            return
        self.progress.console.print(f"[dim]{redact(text)}[/dim]")

    def _line(self, text: str, at: float) -> None:
        stamp = time.strftime("%H:%M:%S", time.localtime(at))
        self.progress.console.print(f"{stamp} {redact(text)}", markup=False, highlight=False, soft_wrap=True)

    def task_started(self, key: str, description: str, total: float | None) -> None:
        self.task_finished(key)
        self.tasks[key] = self.progress.add_task(description, total=total)
        if self.lines:
            now = self._clock()
            self.started[key] = (description, now)
            self._line(f"{description} …", now)

    def task_advanced(self, key: str, amount: float = 1.0, description: str | None = None) -> None:
        if key in self.tasks:
            kwargs = {"description": description} if description else {}
            self.progress.update(self.tasks[key], advance=amount, **kwargs)

    def task_finished(self, key: str) -> None:
        task = self.tasks.pop(key, None)
        if task is not None:
            self.progress.remove_task(task)
        begun = self.started.pop(key, None)
        if begun is not None:
            now = self._clock()
            ended = "interrupted after" if process.interrupted() else "done in"
            self._line(f"{begun[0]}: {ended} {human_duration(now - begun[1])}", now)


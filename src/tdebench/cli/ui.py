"""Rich progress bars and messages for a run (on stderr, so stdout keeps the summary)."""

from __future__ import annotations

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

from tdebench.encryption import redact
from tdebench.api.events import RunListener


class RichListener(RunListener):
    """Shows each phase of a run as a progress bar."""

    def __init__(self, console: Console) -> None:
        self.console = console
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

    def task_started(self, key: str, description: str, total: float | None) -> None:
        self.task_finished(key)
        self.tasks[key] = self.progress.add_task(description, total=total)

    def task_advanced(self, key: str, amount: float = 1.0, description: str | None = None) -> None:
        if key in self.tasks:
            kwargs = {"description": description} if description else {}
            self.progress.update(self.tasks[key], advance=amount, **kwargs)

    def task_finished(self, key: str) -> None:
        task = self.tasks.pop(key, None)
        if task is not None:
            self.progress.remove_task(task)

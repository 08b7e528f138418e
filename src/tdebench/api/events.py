"""What a run tells its user while it goes; the CLI shows it with rich progress bars."""

from __future__ import annotations


class RunListener:
    """Default listener: silent. Subclass and override what you want to show."""

    def message(self, text: str) -> None:
        """A one-line status message."""

    def task_started(self, key: str, description: str, total: float | None) -> None:
        """A progress bar ``key`` begins (total None = indeterminate)."""

    def task_advanced(self, key: str, amount: float = 1.0, description: str | None = None) -> None:
        """Progress bar ``key`` moves by ``amount``."""

    def task_finished(self, key: str) -> None:
        """Progress bar ``key`` is done."""

"""The sql workload's one option: the directory (``--workload-dir DIR``, ``--workload-option dir=DIR`` or
``[run.options] dir`` in an experiment file, where a relative path is relative to the file). Parsing it reads
and checks the whole directory, so a malformed one is refused before any work."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, Self

from pydantic import PrivateAttr

from tdebench.errors import UsageError
from tdebench.workloads.options import WorkloadOptions


class SqlOptions(WorkloadOptions):
    """Validated options; :attr:`layout` is the checked directory."""

    workload_name = "sql"
    path_options: ClassVar[tuple[str, ...]] = ("dir",)
    fix_hint = "give --workload-dir DIR, the directory holding schema.sql, data/ and queries/ (docs/workloads/sql.md)"
    dir: str | None = None
    _layout: Any = PrivateAttr(default=None)

    @classmethod
    def parse(cls, raw: Mapping[str, Any] | None) -> Self:
        from tdebench.workloads.sql.layout import DirProblem, load_workload_dir

        options = super().parse(raw)
        if not options.dir:
            raise UsageError("--workload sql needs the directory of your workload", cls.fix_hint)
        try:
            options._layout = load_workload_dir(Path(options.dir))
        except DirProblem as exc:
            raise UsageError(str(exc), exc.fix) from None
        return options

    @property
    def layout(self) -> Any:
        """The checked :class:`~tdebench.workloads.sql.layout.WorkloadDir`."""
        return self._layout

    def check_plan(self, families: set[str], reset: str) -> None:
        from tdebench.workloads.sql.layout import DirProblem, check_family, check_restore

        try:
            for family in sorted(families):
                check_family(self._layout, family)
            check_restore(self._layout, reset)
        except DirProblem as exc:
            raise UsageError(str(exc), exc.fix) from None


def parse_options(raw: dict[str, Any]) -> SqlOptions:
    """UsageError naming the file of the directory that is wrong, and the fix."""
    return SqlOptions.parse(raw)

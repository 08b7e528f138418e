"""The part of a DB-API 2 connection tdebench uses (re-exported by :mod:`tdebench.api.engine`), in a module of its
own so that the capability objects beside the engine contract (:mod:`tdebench.api.server`) can name it too."""

from __future__ import annotations

from typing import Any, Protocol


class Connection(Protocol):
    """The part of a DB-API 2 connection tdebench uses."""

    def cursor(self) -> Any: ...
    def commit(self) -> None: ...
    def rollback(self) -> None: ...
    def close(self) -> None: ...

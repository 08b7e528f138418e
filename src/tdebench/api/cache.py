"""An engine's own cache as a capability object: sized by ``--memory-ratio``, kept across restarts by
``--restart-twins``.

An instance whose engine has a cache tdebench can size returns a :class:`Cache` from
:meth:`tdebench.api.engine.Instance.cache` (None: it has none, the default), and its engine names the class once in
:attr:`tdebench.api.engine.Engine.cache_type`. What the runner checks before any work follows from that class:
the setting it changes, where a missed page comes from, the memory beyond the cache, and whether a restart keeps
the cached pages (a :class:`WarmCache`: :attr:`tdebench.api.engine.Engine.warm_restart`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from tdebench.api.footprint import size_setting

#: the engine's own instance class that a cache belongs to
InstanceT = TypeVar("InstanceT")


class CacheNotRestorable(Exception):
    """:meth:`WarmCache.save`: the cache cannot be given back as it is after a restart (the reason)."""


class Cache(ABC, Generic[InstanceT]):
    """The engine's own cache of one instance (buffer pool, shared_buffers, page cache, memory limit), of the
    engine's own instance class ``InstanceT``."""

    #: the setting :meth:`resize` changes (e.g. ``innodb_buffer_pool_size``)
    setting: ClassVar[str]
    #: where a page the cache misses can come from under a memory ratio (:data:`tdebench.api.regime.PAGE_SOURCES`),
    #: the default first: ``disk`` (the OS page cache bypassed or bounded) and/or ``memory`` (the OS page cache
    #: holds the data); ``--page-source`` is refused for an engine that cannot provide the one asked for
    page_sources: ClassVar[tuple[str, ...]] = ()
    #: bytes an instance takes beyond its cache (the memory sweep checks that the caches plus this fit the machine)
    headroom: ClassVar[int] = 0
    #: the unit of a bare number in :attr:`setting` (bytes; e.g. 8 kB blocks)
    setting_unit: ClassVar[int] = 1

    @classmethod
    def configured_bytes(cls, settings: dict[str, Any]) -> int | None:
        """The cache size an instance's ``settings`` give it (``4GB``, ``512M``, a bare number in
        :attr:`setting_unit`), recorded for a run without a memory ratio; None when they do not say."""
        return size_setting(str(settings.get(cls.setting, "")), cls.setting_unit, 0) or None

    def __init__(self, instance: InstanceT) -> None:
        #: the instance whose cache this is (the engine's own class)
        self.instance = instance

    @abstractmethod
    def resize(self, cache_bytes: int, page_source: str = "") -> dict[str, Any]:
        """Give the cache ``cache_bytes`` from now on, restarting the server if the engine needs it, and keep that
        size across later restarts; a page it misses comes from ``page_source`` (one of :attr:`page_sources`; "":
        the first). Returns what was set (settings as the engine reports them, and how the OS page cache is
        bounded), for the manifest."""


    def os_cache_files(self) -> tuple[Path, Path] | None:
        """Where the OS page cache holds what this cache misses, when the run fills it (``--page-source memory``):
        (the directory whose files' cached pages are dropped, the one whose files are read back in), so that the
        restarts before every block can fill every twin's at once (:mod:`tdebench.runner.restarts`); None (the
        default) when the run does not fill it."""
        return None


class WarmCache(Cache[InstanceT]):
    """A cache whose pages a restart of the server processes can keep (``--restart-twins``): save, restart, load."""

    @abstractmethod
    def save(self) -> dict[str, Any]:
        """Note which pages the server has cached, for :meth:`load` after a stop and start: at least
        ``pages_cached``; keys starting with "_" are for :meth:`load` only (the rest goes to the manifest).
        :class:`CacheNotRestorable` (before anything changes) when it could not be given back as it is."""

    @abstractmethod
    def load(self, saved: dict[str, Any]) -> dict[str, Any]:
        """Read the pages :meth:`save` noted back into the (restarted) server's cache and return once they are
        cached; facts for the manifest, at least ``pages_loaded``."""

    def restart_keeping(self, restart: Callable[[], None]) -> dict[str, Any]:
        """``restart()`` (the instance's stop and start) with the pages the old processes had cached: save,
        restart, load."""
        saved = self.save()
        restart()
        return {**public(saved), **self.load(saved)}


def public(facts: dict[str, Any]) -> dict[str, Any]:
    """``facts`` without the keys starting with "_" (an engine's own data, e.g. the block list of a saved cache)."""
    return {k: v for k, v in facts.items() if not k.startswith("_")}

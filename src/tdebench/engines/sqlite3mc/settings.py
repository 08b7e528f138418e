"""The settings a user may change with ``--server-setting`` (identical for both twins), as the sqlite engine's."""

from __future__ import annotations

from tdebench.errors import UsageError

DEFAULTS = {"page_size": "4096", "cache_size": "-2000", "journal_mode": "delete", "synchronous": "full",
            "temp_store": "default"}
CHOICES = {"journal_mode": ("delete", "wal", "truncate", "memory", "off"),
           "synchronous": ("off", "normal", "full", "extra"), "temp_store": ("default", "file", "memory")}


def validate(settings: dict[str, str]) -> None:
    """UsageError naming the first setting or value this engine does not take."""
    for key, value in settings.items():
        if key not in DEFAULTS:
            raise UsageError(f"unknown sqlite3mc setting '{key}'", f"use one of: {', '.join(DEFAULTS)}")
        allowed = CHOICES.get(key)
        if allowed and value.lower() not in allowed:
            raise UsageError(f"bad value '{value}' for sqlite3mc setting {key}", f"use one of: {', '.join(allowed)}")
        if key in ("page_size", "cache_size") and not value.lstrip("-").isdigit():
            raise UsageError(f"bad value '{value}' for sqlite3mc setting {key}", "give an integer")
    size = int(settings.get("page_size", DEFAULTS["page_size"]))
    if size < 512 or size > 65536 or size & (size - 1):
        raise UsageError(f"bad page_size {size}", "use a power of two from 512 to 65536")

"""``KEY=VALUE`` options (``--server-setting``, ``--workload-option``, ...), as the commands take them."""

from __future__ import annotations

from tdebench.errors import UsageError


def parse_settings(items: list[str], option: str = "--server-setting", example: str = "page_size=8192") -> dict[str, str]:
    """``KEY=VALUE`` items of a repeatable option -> {key (lower case): value}; UsageError naming the bad one."""
    settings: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"bad {option} '{item}'", f"write KEY=VALUE, e.g. {option} {example}")
        settings[key.strip().lower()] = value.strip()
    return settings

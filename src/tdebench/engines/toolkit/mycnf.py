"""``--server-setting`` checked for the servers configured by a my.cnf option file (MariaDB, MySQL): option names
with ``-`` and ``_`` alike, the options tdebench manages itself refused, single-line values."""

from __future__ import annotations

import re
from collections.abc import Mapping

from tdebench.errors import UsageError

_NAME = re.compile(r"^[a-z][a-z0-9_]*$")


def normalize_key(key: str) -> str:
    """The servers treat ``-`` and ``_`` alike in option names; tdebench stores ``_``."""
    return key.strip().lower().replace("-", "_")


def _managed(key: str, reserved: Mapping[str, str]) -> str | None:
    """Why tdebench manages option ``key`` ("" when no reason is given), None when it does not."""
    for name, why in reserved.items():
        if key == name or (name.endswith("*") and key.startswith(name[:-1])):
            return why
    return None


def check_settings(settings: Mapping[str, str], server: str, reserved: Mapping[str, str],
                   defaults: Mapping[str, str], encryption: str) -> None:
    """UsageError for a malformed ``--server-setting`` or one tdebench manages (``reserved``: exact names and
    prefixes ending in ``*``, each with why, or ""); a managed option at tdebench's own default (``defaults``,
    merged in before the check) passes. ``encryption``: an example ``--encryption`` for the server."""
    for raw_key, value in settings.items():
        key = normalize_key(raw_key)
        if not _NAME.match(key):
            raise UsageError(f"bad {server} setting name '{raw_key}'",
                             "use a server variable name such as innodb_buffer_pool_size=2G")
        why = _managed(key, reserved)
        if why is not None and defaults.get(key) != str(value):
            raise UsageError(f"{server} setting '{raw_key}' is managed by tdebench" + (f" ({why})" if why else ""),
                             f"leave it out; encryption comes from --encryption, e.g. {encryption}")
        text = str(value)
        if any(c in text for c in "\n\r\0") or text != text.strip():
            raise UsageError(f"bad value for {server} setting '{raw_key}'", "give a single-line value without "
                             "surrounding blanks")

"""The width of what tdebench prints, and how ``--help`` is laid out, on a terminal and piped (light: the CLI
imports it at start-up)."""

from __future__ import annotations

import os
from typing import Any, TextIO


def piped_width(stream: TextIO, fallback: int) -> int | None:
    """The width of output to ``stream``: None on a terminal (rich measures it); piped or redirected, ``COLUMNS``
    when set, else the width of the terminal the user types in (stderr or stdin: ``tdebench run --help | less``),
    else ``fallback``."""
    if stream.isatty():
        return None
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return int(columns)
    for fd in (2, 0):
        try:
            return os.get_terminal_size(fd).columns
        except OSError:
            continue
    return fallback


def help_layout(app: Any, stream: TextIO) -> dict[str, int]:
    """How ``--help`` is laid out: on a terminal, rich's panels as typer draws them; piped, click's plain text, which
    wraps at word boundaries (rich's table cut words with an ellipsis when a column was narrower than a path) at
    :func:`piped_width` (80 without a terminal). Returns the click context settings that say the width."""
    width = piped_width(stream, 80)
    if width is None:
        return {}
    app.rich_markup_mode = None
    return {"terminal_width": width, "max_content_width": width}


def keep_brackets(command: Any, rich: bool) -> None:
    """Brackets in help texts are text (``[run]``, ``[:PORT]``), written plainly or escaped for rich (``\\[``): for
    rich's panels (``rich``) escape those not escaped yet, for the plain layout drop the escapes and list each
    subcommand with the whole first paragraph of its help, as rich does; ``command`` and its subcommands."""
    from rich.markup import escape

    def fix(text: str) -> str:
        if not rich:
            return text.replace("\\[", "[")
        return text if "\\[" in text else escape(text)

    for param in getattr(command, "params", []):
        if getattr(param, "help", None):
            param.help = fix(param.help)
    if getattr(command, "help", None):
        command.help = fix(command.help)
    for sub in getattr(command, "commands", {}).values():
        keep_brackets(sub, rich)
        if not rich and sub.help and not sub.short_help:  # click cut it at ~45 characters or at "e.g."
            sub.short_help = " ".join(sub.help.split("\n\n")[0].split())

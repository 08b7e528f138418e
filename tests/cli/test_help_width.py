"""``--help`` piped (a pager, a file, CI) keeps every word whole and uses the terminal's width when there is one
(COLUMNS): it was once cut at 80 columns mid-word ("docs/workloads/sq…")."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[2] / "src")


def piped_help(command: str, columns: int | None) -> str:
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "TERMINAL_WIDTH", "FORCE_COLOR")}
    env["PYTHONPATH"] = SRC + os.pathsep + os.environ.get("PYTHONPATH", "")
    if columns is not None:
        env["COLUMNS"] = str(columns)
    result = subprocess.run([sys.executable, "-m", "tdebench", command, "--help"], capture_output=True, text=True,
                            env=env, stdin=subprocess.DEVNULL, timeout=120)
    assert result.returncode == 0, result.stderr
    return result.stdout


def help_words(command: str) -> list[str]:
    """Every word of every option's help text of ``command``, as the source writes it."""
    import typer

    from tdebench.cli.app import app

    params = typer.main.get_command(app).commands[command].params  # type: ignore[attr-defined]
    return [w for p in params for w in (getattr(p, "help", None) or "").split()]


def unwrapped(text: str) -> str:
    """The help as one line: wrapped lines joined (after a hyphen, without a space)."""
    return " ".join(re.sub(r"-\n\s+", "-", text).split())


@pytest.mark.parametrize("command", ["run", "report"])
def test_piped_help_keeps_every_word_whole(command: str) -> None:
    text = piped_help(command, None)
    assert "\\[" not in text
    assert max(len(line) for line in text.splitlines()) <= 80
    flat = unwrapped(text)
    missing = [w for w in help_words(command) if w not in flat]
    assert not missing, f"cut or lost in the piped help: {missing[:10]}"
    if command == "run":
        assert "docs/workloads/sql.md" in flat


def test_piped_help_respects_the_terminal_width() -> None:
    text = piped_help("run", 160)
    widths = [len(line) for line in text.splitlines()]
    assert max(widths) <= 160 and max(widths) > 120, max(widths)
    assert not [w for w in help_words("run") if w not in unwrapped(text)]


def test_help_on_a_terminal_keeps_its_brackets() -> None:
    """On a terminal rich draws the help; a ``[run]`` or ``[:PORT]`` in a help text is text, not markup."""
    import pty
    import select

    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", ""), "COLUMNS": "250",
           "NO_COLOR": "1"}
    leader, follower = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "tdebench", "run", "--help"], stdout=follower, stderr=follower,
                            stdin=subprocess.DEVNULL, env=env)
    os.close(follower)
    chunks = []
    while True:
        ready, _, _ = select.select([leader], [], [], 60)
        try:
            chunk = os.read(leader, 65536) if ready else b""
        except OSError:
            chunk = b""
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait(timeout=60)
    os.close(leader)
    text = re.sub(r"\x1b\[[0-9;]*m", "", b"".join(chunks).decode(errors="replace"))
    assert "╭" in text, text[:500]  # rich's panels: it is the terminal layout
    assert "its [run] keys" in text and "[:PORT]" in text


def test_brackets_written_plainly_or_escaped_read_the_same_in_both_layouts() -> None:
    import click
    from rich.console import Console
    from rich.text import Text

    from tdebench.cli.terminal import keep_brackets

    def command() -> click.Command:
        return click.Command("c", params=[click.Option(["--a"], help="its \\[run] keys"),
                                          click.Option(["--b"], help="HOST[:PORT]")])
    plain = command()
    keep_brackets(plain, rich=False)
    assert [p.help for p in plain.params] == ["its [run] keys", "HOST[:PORT]"]
    drawn = command()
    keep_brackets(drawn, rich=True)
    console = Console(record=True, width=80, color_system=None)
    for p in drawn.params:
        console.print(Text.from_markup(p.help))
    assert console.export_text().split("\n")[:2] == ["its [run] keys", "HOST[:PORT]"]


def test_a_narrow_terminal_cuts_no_config_label() -> None:
    """The summary's figures wrap in a narrow terminal; a config's label is never cut ("sqlite-sqlcipher-aes-25…")."""
    import shutil

    from rich.console import Console

    from tdebench.cli.summary import build_summary

    run_dir = Path(__file__).resolve().parents[1] / "fixtures" / "rundir_sqlite"
    console = Console(record=True, width=100, color_system=None)
    console.print(build_summary(run_dir))
    text = console.export_text()
    assert "…" not in text and text.count("sqlite-sqlcipher-aes-256-cbc") >= 3, text  # totals, verdict, storage
    assert shutil.which("true") is not None


def test_piped_command_list_says_each_command_whole() -> None:
    import typer

    from tdebench.cli.app import app

    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    text = subprocess.run([sys.executable, "-m", "tdebench", "--help"], capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=120,
                          env={**env, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}).stdout
    commands = text.split("Commands:")[1]
    assert "..." not in commands  # click cut each command's line at ~45 characters
    flat = unwrapped(commands)
    for name, sub in typer.main.get_command(app).commands.items():  # type: ignore[attr-defined]
        first = " ".join((sub.help or "").split("\n\n")[0].split())
        assert first.replace("\\[", "[") in flat, name

"""`python -m tdebench` and the `tdebench` console script.

A signal can arrive while Python is still importing tdebench (a second or more on a loaded machine), before the
CLI installs its handlers: it must still end the process as an interrupt (exit 130, one line), never as a
traceback or a death by signal. Nothing has been started yet, so there is nothing to clean up.

A signal can also arrive after the CLI has finished (its run complete, its results written) while the interpreter
shuts down, when Python has put back the default handlers: the process would die by the signal, and a finished run
would look killed. Once the CLI is done, these signals are ignored.
"""

import signal
import sys


def _interrupted(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def run() -> None:
    """Handle SIGTERM/SIGHUP like Ctrl-C from the first moment, then hand over to the CLI."""
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) is not signal.SIG_IGN:  # nohup and background jobs ignore some on purpose
            signal.signal(sig, _interrupted)
    try:
        from tdebench.cli.app import main
    except KeyboardInterrupt:
        print("tdebench: interrupted while starting; nothing was started", file=sys.stderr, flush=True)
        sys.exit(130)
    try:
        main()
    except KeyboardInterrupt:  # arrived outside main's own handling (before its handlers, or after its clean-up)
        print("tdebench: interrupted", file=sys.stderr, flush=True)
        sys.exit(130)
    finally:
        _ignore_late_signals()


def _ignore_late_signals() -> None:
    """Nothing is left to interrupt: keep the exit status the CLI chose."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)


if __name__ == "__main__":
    run()

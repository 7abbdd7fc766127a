"""The one place that turns how a command ended into the process's exit status.

Exit codes (the values are stitcher.errors.ExitStatus): 0 success, 1 error, 2 usage error (bad
flags, empty query, ambiguous name, a source name taken by another folder), 3 ingest finished
but some inputs could not be read, 4 --prune refused to delete (nothing deleted), 5 another
writer holds the collection, 130 interrupted.
"""

from __future__ import annotations

import os

import typer

from stitcher.cli.output import error_console, error_line
from stitcher.cli.process import InterruptWatch
from stitcher.cli.root import app, flags_of_settings
from stitcher.errors import ExitStatus, StitcherError

_SIGINT = InterruptWatch()


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `stitcher` script: run the command, return its exit status.

    The app runs with click's standalone mode off, so that errors come back here instead of being
    printed by click; the price is that click then *returns* the code of `typer.Exit(n)` (and of
    Ctrl-C, as 130) instead of exiting. Whatever way a command ends — return value, typer.Exit,
    SystemExit, an exception — ends up as the int returned here, which the script passes to
    sys.exit.
    """
    show_traceback = os.environ.get("STITCHER_TRACEBACK") == "1"
    _SIGINT.install()
    try:
        status = _run(argv, show_traceback)
    finally:
        _SIGINT.uninstall()
    if _SIGINT.seen and status != ExitStatus.OK:
        # Ctrl-C (or cron's SIGINT) can land inside a library that turns KeyboardInterrupt into
        # its own error (pydantic building a validator reports a SchemaError): whatever failure
        # follows an interrupt is the interrupt.
        if status != ExitStatus.INTERRUPTED:
            error_console().print("interrupted")
        return int(ExitStatus.INTERRUPTED)
    return status


def _run(argv: list[str] | None, show_traceback: bool) -> int:
    try:
        outcome = app(args=argv, prog_name="stitcher", standalone_mode=False)
    except SystemExit as done:
        outcome = done.code
    except typer.Exit as done:  # click returns these itself; kept so none can slip through
        outcome = done.exit_code
    except StitcherError as error:
        if show_traceback:
            raise
        error_console().print(error_line(_scrub(error.worded(flags_of_settings()))))
        return int(error.exit_status)
    except (KeyboardInterrupt, typer.Abort):
        # Ctrl-C outside click's own handler (which turns it into 130), or click's answer to
        # EOF or Ctrl-C at a prompt.
        outcome = ExitStatus.INTERRUPTED
    except Exception as error:  # a usage error from typer/click, or a bug
        code = _click_exit_code(error)
        if code is not None:
            return code
        if show_traceback:
            raise
        detail = _first_line(_scrub(str(error)))
        error_console().print(error_line(f"unexpected {type(error).__name__}: {detail}"))
        error_console().print("Run again with STITCHER_TRACEBACK=1 for the traceback.")
        return int(ExitStatus.FAILED)
    status = _exit_status(outcome)
    if status == ExitStatus.INTERRUPTED:
        error_console().print("interrupted")
    return status


def _exit_status(outcome: object) -> int:
    """The process exit status for what the app returned or exited with, as sys.exit would
    make it: None is success, an int is itself, anything else is printed and is a failure."""
    if outcome is None:
        return int(ExitStatus.OK)
    if isinstance(outcome, int):  # ExitStatus and bool included
        return int(outcome)
    error_console().print(str(outcome))
    return int(ExitStatus.FAILED)


def _click_exit_code(error: Exception) -> int | None:
    """Typer vendors click: print its usage errors the way click would, without importing it."""
    show = getattr(error, "show", None)
    exit_code = getattr(error, "exit_code", None)
    if callable(show) and isinstance(exit_code, int):
        show()
        return exit_code
    return None


def _first_line(message: str) -> str:
    """An unexpected error's first line: library messages can run to pages (server responses,
    nested causes); STITCHER_TRACEBACK=1 shows all of it."""
    lines = message.strip().splitlines()
    return lines[0] + " …" if len(lines) > 1 else message.strip()


def _scrub(message: str) -> str:
    """Never echo an API key, whatever a library put into its message."""
    for name in ("WEAVIATE_API_KEY",):
        secret = os.environ.get(name)
        if secret:
            message = message.replace(secret, "***")
    return message

"""How a command's output reaches the user: data on stdout (JSON, or rich on `data_console`),
notices and progress on stderr (`notice_console`, silent under --quiet), `error:` lines on stderr
(`error_console`, never silenced).

User text (file and collection names, queries, error messages) is never parsed as rich markup:
every console is created with markup off, and styled lines are built from `Text` pieces.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any, Protocol

import typer

from stitcher.cli.help import setting_flags
from stitcher.cli.invocation import INVOCATION
from stitcher.errors import names_a_setting, one_line, worded

# rich is imported inside the functions that make consoles (~40 ms): `stitcher --help` and
# `--json` output need none of it.

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text


def json_text(data: Any, *, indent: int | None = None) -> str:
    """`data` as JSON text: Chinese (any non-ASCII) as itself, never as \\uXXXX escapes."""
    return json.dumps(data, ensure_ascii=False, indent=indent, default=str)


def print_json(data: Any, *, indent: int | None = None) -> None:
    """Write `data` as one JSON document on stdout, encoded as UTF-8 whatever the locale (a
    cron job's C or latin-1 locale must not fail on a Chinese title)."""
    text = json_text(data, indent=indent) + "\n"
    stream = sys.stdout
    buffer = getattr(stream, "buffer", None)
    if buffer is None:  # a text-only stream (a test's StringIO): it takes str as it is
        stream.write(text)
        stream.flush()
        return
    stream.flush()
    buffer.write(text.encode("utf-8"))
    buffer.flush()


class Report(Protocol):
    """What a command reports: its --json object, else one line."""

    def to_json(self) -> dict[str, Any]: ...

    def one_line(self) -> str: ...


def echo_report(report: Report, as_json: bool) -> None:
    """The report on stdout: its --json object, or its line."""
    if as_json:
        print_json(report.to_json())
    else:
        # one_line: a file's extension in the line may hold a newline
        typer.echo(one_line(report.one_line()))


def data_console() -> Console:
    from rich.console import Console

    return Console(soft_wrap=False, highlight=False, markup=False)


def notice_console() -> Console:
    """stderr for notices and progress: silent under `--quiet` (errors use `error_console()`)."""
    from rich.console import Console

    # soft_wrap: an error or notice stays one line however long the path in it (cron mail, grep)
    return Console(
        stderr=True, highlight=False, markup=False, soft_wrap=True, quiet=INVOCATION.quiet
    )


def error_console() -> Console:
    """stderr for `error:` lines, which `--quiet` never silences."""
    from rich.console import Console

    return Console(stderr=True, highlight=False, markup=False, soft_wrap=True)


def shown(message: str) -> str:
    """A library message as shown: the settings it names spelled as this command's flags, and
    control characters (a newline or ESC in a file name) escaped, so it stays one line.

    Every notice and every `error:` line passes here or through `error_line`."""
    if names_a_setting(message):
        root = INVOCATION.command
        message = worded(message, setting_flags(root) if root is not None else None)
    return one_line(message)


def error_line(message: str) -> Text:
    """`error: message` with only the label styled: the message is shown as it is, on one line
    (control characters escaped: a crafted file name cannot forge a line of its own)."""
    from rich.text import Text

    return Text.assemble(("error:", "red"), " ", one_line(message))

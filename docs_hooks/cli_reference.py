"""MkDocs hook: the CLI reference page is the commands' own `--help`, rendered at build time.

docs/cli-reference.md holds a `<!-- commands -->` marker; this replaces it with the help of the
top level and of every command and sub-command, as the installed script prints it at 80
columns. The reference therefore cannot drift from the code: a flag added, renamed or
re-documented shows up in the next `mkdocs build`.
"""

from __future__ import annotations

import os
from typing import Any

MARKER = "<!-- commands -->"


def command_paths() -> list[tuple[str, ...]]:
    from typer.main import get_command

    from stitcher.cli import app

    paths: list[tuple[str, ...]] = [()]

    def walk(command: Any, prefix: tuple[str, ...]) -> None:
        for name in sorted(getattr(command, "commands", {})):
            child = command.commands[name]
            if getattr(child, "hidden", False):
                continue
            paths.append((*prefix, name))
            walk(child, (*prefix, name))

    walk(get_command(app), ())
    return paths


def help_text(path: tuple[str, ...]) -> str:
    from typer.testing import CliRunner

    from stitcher.cli import app

    environment = {"COLUMNS": "80", "TERMINAL_WIDTH": "80", "NO_COLOR": "1", "TERM": "dumb"}
    result = CliRunner().invoke(app, [*path, "--help"], env=environment, prog_name="stitcher")
    if result.exit_code != 0:
        raise RuntimeError(f"`stitcher {' '.join(path)} --help` exited {result.exit_code}")
    return result.output.rstrip()


def reference() -> str:
    sections = []
    for path in command_paths():
        title = " ".join(("stitcher", *path))
        sections.append(f"## `{title}`\n\n```text\n{help_text(path)}\n```\n")
    return "\n".join(sections)


def on_page_markdown(markdown: str, page: Any, **_: Any) -> str:
    if MARKER not in markdown:
        return markdown
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    return markdown.replace(MARKER, reference())

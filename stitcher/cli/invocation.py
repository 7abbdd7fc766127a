"""What the root command's options asked for in this run: set by its callback before any command
runs, read by the commands and the consoles."""

from __future__ import annotations

from typing import Any


class Invocation:
    """The global options of this run (`--quiet`, `--verbose`, `--profile`) and its command tree."""

    quiet = False
    verbose = False
    profile: str | None = None
    #: the root click command: the flags that library messages name are looked up in it
    command: Any = None


INVOCATION = Invocation()

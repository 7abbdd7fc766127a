"""troff man page sources (.1-.9, .1p/.3p, .3pm, .man): rendered, then hard-wrap joined.

What is stored. `Document.text` is the page as `man` shows it, not its source: troff source is
requests and escapes ("\\fBls\\fR", ".TP", "\\-") that no reader wants in a search result, and
only a troff formatter knows what they mean. The page is rendered by the system's man-db
(`MANWIDTH=80 man -P cat -l FILE`, which runs tbl/eqn/preconv as the page asks) or, without
it, by GNU groff (`groff -k -t -mandoc -Tutf8 -P -cbou`, 78 columns); the rendered text, read
like any man page in a .txt file (the man-page rules of `stitcher.loaders.rewrap`), is
hard-wrap joined. Offsets refer to that rendering. With neither program installed the file is
refused with a LoadError that says so; nothing is guessed from the source.

A file with one of these suffixes that has no troff request in its first 4 KB (a rotated log,
"syslog.1") is read as plain text. A page that only includes another (".so man1/other.1") has
no text of its own: it is skipped as empty.

Metadata: title "NAME(SECTION)" from ".TH" (or mdoc ".Dt"); date from ".TH"'s third argument
(or mdoc ".Dd") when it is a date ("2024-05-01", "May 2024", "1 May 2024", "May 1, 2024").
"""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from stitcher.errors import LoadError
from stitcher.loaders.decoding import decode_text
from stitcher.loaders.markup import loose_date, trim
from stitcher.loaders.rewrap import rewrap

#: Suffixes read as man page sources.
TROFF_SUFFIXES = (*(f".{n}" for n in range(1, 10)), ".1p", ".3p", ".3pm", ".man")

_SNIFF_CHARS = 4096
_REQUEST = re.compile(r"^(?:\.[ \t]*[A-Za-z\\]|'\\\")", re.MULTILINE)
_SO_ONLY = re.compile(r"\A(?:[ \t]*(?:\.\\\"[^\n]*|'\\\"[^\n]*)?\n)*\.so[ \t]+(\S+)[ \t]*\n?\s*\Z")
_TH = re.compile(r"^\.TH[ \t]+(.*)$", re.MULTILINE)
_DT = re.compile(r"^\.Dt[ \t]+(\S+)[ \t]+(\S+)", re.MULTILINE)
_DD = re.compile(r"^\.Dd[ \t]+(.*)$", re.MULTILINE)
_ARGUMENT = re.compile(r'"((?:[^"]|"")*)"|(\S+)')
_RENDER_TIMEOUT = 120
_MAN_WIDTH = "80"
#: The line length pages are rendered at: man-db sets it two columns short of MANWIDTH, and
#: the groff fallback is given the same (-rLL). rewrap trusts it rather than measuring the page.
_RENDERED_COLUMN = int(_MAN_WIDTH) - 2


def read_troff(data: bytes, source: str) -> tuple[str, dict[str, Any]]:
    """A man page source → (text, metadata): see the module docstring."""
    text = decode_text(data, source)
    if not _REQUEST.search(text[:_SNIFF_CHARS]):
        return trim(rewrap(text)), {}  # read as a .txt file is
    if _SO_ONLY.match(text):
        return "", {}  # only includes another page: no text of its own, skipped as empty
    rendered = render(data, source)
    return trim(rewrap(rendered, column=_RENDERED_COLUMN, breaks_cjk=False)), _meta(text)


def render(data: bytes, source: str) -> str:
    """The page as text, rendered by man-db's `man` or else by groff.

    Raises:
        LoadError: Neither program is installed, or rendering failed.
    """
    man = shutil.which("man")
    groff = shutil.which("groff")
    if man is None and groff is None:
        raise LoadError(
            f"{source}: cannot render troff: neither groff nor man is installed "
            "(install groff-base or man-db)"
        )
    env = {
        **os.environ,
        "LC_ALL": "C.UTF-8",  # man picks its output encoding from the locale
        "MANWIDTH": _MAN_WIDTH,
        "MAN_DISABLE_SECCOMP": "1",  # man-db's sandbox fails in some containers
        "MANPAGER": "cat",
        "PAGER": "cat",
    }
    env.pop("MAN_KEEP_FORMATTING", None)  # set at all (even empty), man keeps the overstrikes
    with tempfile.TemporaryDirectory(prefix="stitcher-troff-") as directory:
        page = Path(directory) / "page.man"
        page.write_bytes(data)
        if man is not None:
            command = [man, "-P", "cat", "-l", str(page)]
        else:
            assert groff is not None
            command = [groff, "-k", "-t", "-mandoc", "-Tutf8", "-P", "-cbou"]
            command += [f"-rLL={_RENDERED_COLUMN}n", f"-rLT={_RENDERED_COLUMN}n", str(page)]
        try:
            done = subprocess.run(
                command,
                capture_output=True,
                cwd=directory,
                env=env,
                timeout=_RENDER_TIMEOUT,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise LoadError(f"{source}: rendering the man page took too long") from None
        except OSError as exc:
            raise LoadError(f"{source}: cannot run {command[0]}: {exc.strerror or exc}") from None
    output = done.stdout.decode("utf-8", errors="replace")
    if done.returncode != 0 and not output.strip():
        problem = done.stderr.decode("utf-8", errors="replace").strip().splitlines()
        detail = problem[-1] if problem else f"exit status {done.returncode}"
        raise LoadError(f"{source}: cannot render the man page: {detail}")
    # Bold and underline by overstriking, should a formatter still produce them.
    output = re.sub(r".\x08", "", output)
    return output.replace("\r\n", "\n")


def _meta(text: str) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    header = _TH.search(text)
    date_text: str | None = None
    if header:
        arguments = [quoted or bare for quoted, bare in _ARGUMENT.findall(header.group(1))]
        if len(arguments) >= 2:
            meta["title"] = f"{_unescape(arguments[0])}({_unescape(arguments[1])})"
        elif arguments:
            meta["title"] = _unescape(arguments[0])
        date_text = arguments[2] if len(arguments) >= 3 else None
    else:
        mdoc = _DT.search(text)
        if mdoc:
            meta["title"] = f"{mdoc.group(1)}({mdoc.group(2)})"
        dd = _DD.search(text)
        if dd:
            date_text = dd.group(1).replace("$Mdocdate:", "").replace("$", "").strip()
    date = _date(date_text)
    if date is not None:
        meta["date"] = date
    return meta


def _unescape(value: str) -> str:
    return re.sub(r"\\f(?:\[[^\]]*\]|\(..|.)", "", value).replace("\\-", "-").replace('""', '"')


def _date(value: str | None) -> dt.datetime | None:
    return loose_date(" ".join(_unescape(value).split())) if value else None

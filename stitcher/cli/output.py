"""JSON on stdout, the one way every command prints it."""

from __future__ import annotations

import json
import sys
from typing import Any


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

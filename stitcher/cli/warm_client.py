"""The search command's side of the warm search worker (stitcher.warm): ask it first, start it
after."""

from __future__ import annotations

import json
import sys
from typing import Any

import typer

from stitcher.cli.invocation import INVOCATION
from stitcher.cli.library import opened_in_process
from stitcher.cli.output import data_console, notice_console, shown
from stitcher.config import load_settings

# The library core (stitcher.warm and render) is imported inside the functions that use it:
# `stitcher --help`, completion and a mistyped flag load none of it (tests/test_startup.py).


def worker_request(flag: bool | None, request: dict[str, Any]) -> dict[str, Any] | None:
    """The worker's request for this search, or None when the worker is not to be used."""
    if opened_in_process():  # the worker would open its collection on a server
        return None
    from stitcher import warm

    settings = load_settings(INVOCATION.profile)
    mode = {True: "always", False: "never", None: settings.value("warm")}[flag]
    if not warm.wanted(mode, stdin_tty=sys.stdin.isatty(), stdout_tty=sys.stdout.isatty()):
        return None
    try:
        return warm.search_request(
            request, profile=INVOCATION.profile, idle=settings.value("warm_idle")
        )
    except Exception:  # whatever it is, the in-process search meets it and reports it as usual
        return None


def ask_warm_worker(request: dict[str, Any], explain: bool) -> str:
    """ "served": the worker's result is printed. Otherwise nothing is printed and the search
    runs in-process: "absent" (no worker, or a stale one that is exiting) or "declined" (a live
    worker met an error, a timeout or a local server that is down)."""
    from stitcher import warm

    try:
        answer = warm.search(request)
    except Exception:  # a worker's malfunction is never the user's error: search in-process
        return "absent"
    if answer is None or answer.get("status") == "stale":
        return "absent"
    if answer.get("status") != "ok":
        return "declined"
    err = notice_console()
    for message in answer.get("notices", ()):
        err.print(shown(message))
    if "json" in answer:
        typer.echo(_spelled_json(answer["json"]) if explain else answer["json"])
    else:
        from stitcher import render

        result = warm.result_from_data(answer["result"]).spelled(shown)
        render.search_results(data_console(), result, explain=explain)
    return "served"


def _spelled_json(text: str) -> str:
    """The worker's `--json --explain` line with the settings its alpha_reason names spelled as
    flags (the worker does not know them; the round trip keeps every other byte as it was)."""
    data = json.loads(text)
    if "alpha_reason" not in data:
        return text
    data["alpha_reason"] = shown(data["alpha_reason"])
    return json.dumps(data, ensure_ascii=False)


def start_warm_worker(request: dict[str, Any]) -> None:
    from stitcher import warm

    try:
        warm.start_worker(request, idle=request["idle"])
    except OSError as error:  # the search itself succeeded; the next one just runs in-process
        notice_console().print(f"warning: no warm search worker: {error}")

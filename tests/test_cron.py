"""The README's crontab recipe, run the way cron runs it.

cron starts the command through /bin/sh with a minimal environment (no LANG, a short PATH), no
terminal and no stdin, and mails whatever it prints. So a nightly `stitcher ingest DIR --prune`
must print exactly one summary line on stdout, keep progress and notices on stderr without
carriage-return animations or colour codes, and say with its exit status whether it went well.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import uuid
from pathlib import Path
from typing import Any

import pytest

from stitcher.errors import ExitStatus
from tests.test_exit_codes import REPO, stitcher_script
from tests.test_ingest import EN, ZH

pytestmark = pytest.mark.integration

#: What a nightly run prints: the collection, the document counts, then the chunk counters.
SUMMARY = re.compile(
    r"(?P<collection>\w+): (?P<added>\d+) added, (?P<updated>\d+) updated, "
    r"(?P<unchanged>\d+) unchanged, (?P<deleted>\d+) deleted, (?P<failed>\d+) failed; "
    r"(?P<written>\d+) chunks written, (?P<embedded>\d+) embedded, \d+ vectors reused in [\d.]+s\n"
)


def cron_environment() -> dict[str, str]:
    """What cron gives a job (PATH, HOME, SHELL, LOGNAME), plus the variables that point at this
    session's server and caches, and PYTHONPATH so that the script imports this checkout."""
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": os.environ.get("HOME", str(Path.home())),
        "SHELL": "/bin/sh",
        "LOGNAME": os.environ.get("LOGNAME", os.environ.get("USER", "cron")),
        "PYTHONPATH": str(REPO),
    }
    for name in ("STITCHER_HOME", "STITCHER_CACHE", "XDG_DATA_HOME", "XDG_CACHE_HOME"):
        if name in os.environ:
            env[name] = os.environ[name]
    env["HF_HUB_OFFLINE"] = "1"  # the model ships with the package; a download would be a bug
    return env


def run_like_cron(command: str) -> subprocess.CompletedProcess[str]:
    """`command` as a crontab line runs it: /bin/sh -c, its own session (no controlling
    terminal), stdin closed, stdout and stderr captured (cron mails them)."""
    return subprocess.run(
        ["/bin/sh", "-c", command],
        env=cron_environment(),
        cwd=cron_environment()["HOME"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        start_new_session=True,
        timeout=900,
    )


def summary_of(result: subprocess.CompletedProcess[str]) -> dict[str, str]:
    """The one line on stdout, parsed; fails on anything else on stdout or animated stderr."""
    assert result.returncode == ExitStatus.OK, result.stderr
    match = SUMMARY.fullmatch(result.stdout)
    assert match, f"stdout is not exactly one summary line: {result.stdout!r}"
    assert "\r" not in result.stderr and "\x1b" not in result.stderr, result.stderr
    assert "\x1b" not in result.stdout
    return match.groupdict()


def test_a_nightly_ingest_prints_one_line_and_exits_0(weaviate_server: Any, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "zh").mkdir(parents=True)
    (docs / "rail.txt").write_text(EN * 2, encoding="utf-8")
    (docs / "zh" / "茶.txt").write_text(ZH * 2, encoding="utf-8")
    (docs / "note.md").write_text("---\ntitle: A note\n---\nOne line only.\n", encoding="utf-8")
    collection = "Cron" + uuid.uuid4().hex[:8]
    command = (
        f"{shlex.quote(str(stitcher_script()))} ingest {shlex.quote(str(docs))} "
        f"--prune --collection {collection}"
    )

    first = summary_of(run_like_cron(command))
    assert first["collection"] == collection
    assert (first["added"], first["unchanged"], first["failed"]) == ("3", "0", "0")
    assert int(first["written"]) == int(first["embedded"]) > 3

    second = run_like_cron(command)
    assert summary_of(second) == {
        **first,
        "added": "0",
        "unchanged": "3",
        "written": "0",
        "embedded": "0",
    }
    assert second.stderr == ""  # nothing changed: nothing to say, no mail but the summary

    (docs / "rail.txt").unlink()
    third = summary_of(run_like_cron(command))
    assert (third["unchanged"], third["deleted"], third["embedded"]) == ("2", "1", "0")

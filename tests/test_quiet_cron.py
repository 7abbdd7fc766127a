"""A cron job that mails only on change or failure (issue 36): `stitcher -q ingest` run as cron
runs it (/bin/sh -c, no terminal, stdin closed) prints nothing when nothing changed, one line when
something did, and the `error:` line when something failed. The summary's time is the whole
process's, not only the ingest loop's."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

from stitcher.errors import ExitStatus
from tests.test_cron import SUMMARY, cron_environment, run_like_cron
from tests.test_exit_codes import REPO, assert_one_error_line, stitcher_script
from tests.test_ingest import EN, ZH

pytestmark = pytest.mark.integration


def test_quiet_cron_prints_only_changes_and_failures(weaviate_server: Any, tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "rail.txt").write_text(EN, encoding="utf-8")
    (docs / "茶.txt").write_text(ZH, encoding="utf-8")
    (docs / "notes.xlsx").write_text("Skipped, but no reason to mail.\n", encoding="utf-8")
    collection = "QuietCron" + uuid.uuid4().hex[:8]
    command = (
        f"{shlex.quote(str(stitcher_script()))} -q ingest {shlex.quote(str(docs))} "
        f"--prune --collection {collection}"
    )

    first = run_like_cron(command)
    assert first.returncode == ExitStatus.OK, first.stderr
    assert first.stderr == ""
    assert first.stdout.count("\n") == 1 and "2 added" in first.stdout

    unchanged = run_like_cron(command)
    assert (unchanged.returncode, unchanged.stdout, unchanged.stderr) == (ExitStatus.OK, "", "")

    (docs / "rail.txt").write_text(EN + "\nOne more sentence about rails.\n", encoding="utf-8")
    changed = run_like_cron(command)
    assert changed.returncode == ExitStatus.OK, changed.stderr
    assert changed.stderr == ""
    assert changed.stdout.count("\n") == 1 and "1 updated, 1 unchanged" in changed.stdout

    (docs / "broken.pdf").write_bytes(b"%PDF-1.4 cut short")
    failed = run_like_cron(command)
    assert failed.returncode == ExitStatus.UNREADABLE, failed.stderr
    assert "broken.pdf" in assert_one_error_line(failed.stderr)
    assert failed.stderr.count("\n") == 1

    (docs / "broken.pdf").unlink()
    assert run_like_cron(command).stdout == ""


def test_the_summary_time_is_the_whole_process(weaviate_server: Any, tmp_path: Path) -> None:
    """A process that spends 2 s before stitcher is even imported reports at least 2 s: the time
    counts from the process's start, as `time` and cron see it, not from the ingest loop's."""
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "rail.txt").write_text(EN, encoding="utf-8")
    collection = "Clock" + uuid.uuid4().hex[:8]
    late_start = (
        "import sys, time; time.sleep(2); from stitcher.cli import main; "
        f"sys.exit(main(['ingest', {str(docs)!r}, '-c', {collection!r}, '--json']))"
    )
    done = subprocess.run(
        ["/bin/sh", "-c", f"{shlex.quote(sys.executable)} -c {shlex.quote(late_start)}"],
        env=cron_environment(),
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        start_new_session=True,
        timeout=900,
    )
    assert done.returncode == ExitStatus.OK, done.stderr
    assert json.loads(done.stdout)["seconds"] >= 2.0


def test_the_summary_line_keeps_its_shape() -> None:
    """The line the cron tests parse is the one `one_line` writes (no skipped part without
    skipped files)."""
    from stitcher.ingest import IngestSummary

    summary = IngestSummary(collection="Docs", added=["a"], seconds=4.96)
    assert SUMMARY.fullmatch(summary.one_line() + "\n")
    assert summary.one_line().endswith("in 5.0s")

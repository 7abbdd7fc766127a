"""Quiet, predictable output (issue 16, item 6), through the installed script.

Other packages' warnings (pypdf's about a PDF's cross-reference table, tokenizers', torch's) are
not the user's business in a normal run: they show only with --verbose. --quiet leaves stderr
empty on success. --version names stitcher, the Weaviate client and the local server.
"""

from __future__ import annotations

import re
import uuid
from pathlib import Path
from typing import Any

import pytest

from stitcher.errors import ExitStatus
from tests.test_exit_codes import run_stitcher, script_environment, stitcher_script
from tests.test_ingest import EN, ZH
from tests.test_loaders import make_pdf

#: What pypdf logs about the PDF below ("incorrect startxref pointer(1)", ...).
PYPDF_SAYS = "startxref"


def pdf_with_a_wrong_startxref() -> bytes:
    """A valid PDF whose startxref points 3 bytes off: pypdf reads it and logs warnings."""
    pdf = make_pdf([["Pigeons carry a magnetic compass.", "Tea bushes are pruned in spring."]], {})
    start = pdf.rindex(b"startxref\n") + len(b"startxref\n")
    end = pdf.index(b"\n", start)
    return pdf[:start] + str(int(pdf[start:end]) + 3).encode() + pdf[end:]


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    root = tmp_path / "quietdocs"
    root.mkdir()
    (root / "manual.pdf").write_bytes(pdf_with_a_wrong_startxref())
    (root / "en.txt").write_text(EN, encoding="utf-8")
    (root / "zh.txt").write_text(ZH, encoding="utf-8")
    return root


def _collection() -> str:
    return f"Quiet{uuid.uuid4().hex[:8]}"


def test_the_pdf_makes_pypdf_warn(corpus: Path) -> None:
    """The premise of the tests below: without stitcher's filter, pypdf does warn."""
    import logging

    from stitcher.loaders import discover, load

    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Keep()
    logger = logging.getLogger("pypdf")
    level = logger.level  # an in-process `stitcher` run (tests of main()) may have raised it
    logger.setLevel(logging.WARNING)
    logger.addHandler(handler)
    try:
        pdf = next(f for f in discover([str(corpus)]).files if f.path.suffix == ".pdf")
        assert "magnetic compass" in load(pdf).text
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
    assert any(PYPDF_SAYS in r.getMessage() for r in records)


def test_ingest_writes_no_third_party_warnings(weaviate_server: Any, corpus: Path) -> None:
    name = _collection()
    done = run_stitcher("ingest", str(corpus), "-c", name)
    assert done.returncode == ExitStatus.OK, done.stderr
    assert "3 added" in done.stdout
    assert PYPDF_SAYS not in done.stderr, done.stderr
    assert not re.search(r"warn|deprecat|tokenizers|huggingface", done.stderr, re.I), done.stderr
    # --verbose brings them back, with the logger's name.
    verbose = run_stitcher("--verbose", "ingest", str(corpus), "-c", _collection())
    assert verbose.returncode == ExitStatus.OK, verbose.stderr
    assert re.search(rf"^pypdf\S*: .*{PYPDF_SAYS}", verbose.stderr, re.M), verbose.stderr
    run_stitcher("drop", "-c", name, "--yes")


def test_quiet_ingest_and_search_write_nothing_on_stderr(
    weaviate_server: Any, corpus: Path
) -> None:
    name = _collection()
    done = run_stitcher("--quiet", "ingest", str(corpus), "-c", name)
    assert (done.returncode, done.stderr) == (ExitStatus.OK, "")
    assert "3 added" in done.stdout
    found = run_stitcher("-q", "search", "magnetic compass", "-c", name, "--json")
    assert (found.returncode, found.stderr) == (ExitStatus.OK, "")
    assert "magnetic compass" in found.stdout
    # Errors still show under --quiet.
    missing = run_stitcher("-q", "search", "x", "-c", "NoSuchQuietCollection")
    assert missing.returncode == ExitStatus.FAILED
    assert missing.stderr.startswith("error:")
    run_stitcher("-q", "drop", "-c", name, "--yes")


def test_version_names_the_server_when_it_runs(weaviate_server: Any) -> None:
    done = run_stitcher("--version")
    assert done.returncode == ExitStatus.OK, done.stderr
    lines = done.stdout.splitlines()
    assert [line.split()[0] for line in lines] == ["stitcher", "weaviate-client", "weaviate-server"]
    assert re.fullmatch(r"stitcher \d+\.\d+\S*", lines[0])
    assert re.fullmatch(r"weaviate-client \d+\.\d+\S*", lines[1])
    assert lines[2] == f"weaviate-server {weaviate_server.version} (local, {weaviate_server.url})"


def test_version_without_a_server(tmp_path: Path) -> None:
    done = run_stitcher("--version", env=script_environment(STITCHER_HOME=str(tmp_path)))
    assert done.returncode == ExitStatus.OK, done.stderr
    assert done.stdout.splitlines()[2] == "weaviate-server not running (local server stopped)"
    assert not (tmp_path / "data").exists()  # --version starts nothing


def test_shell_completion_is_offered() -> None:
    # typer finds the shell among the process's ancestors: started from bash, as a user would
    # (a test run detached from any shell, e.g. nohup'd, has none to find).
    import shlex
    import subprocess

    done = subprocess.run(
        ["bash", "-c", f"{shlex.quote(str(stitcher_script()))} --show-completion; exit $?"],
        env=script_environment(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == ExitStatus.OK, done.stderr
    assert "_stitcher_completion" in done.stdout


@pytest.mark.integration
def test_a_command_that_starts_the_local_server_writes_no_python_warnings(tmp_path: Path) -> None:
    # weaviate-client's __init__ calls warnings.simplefilter("default"); before stitcher put the
    # filters back, the started server's Popen object (still running at exit) printed a
    # ResourceWarning after every command that started the local server.
    env = script_environment(STITCHER_HOME=str(tmp_path / "home"))
    try:
        done = run_stitcher("stats", "-c", "NoSuchCollection", env=env)
    finally:
        run_stitcher("server", "stop", env=env)
    assert done.returncode == ExitStatus.FAILED
    assert "does not exist" in done.stderr  # the command reached the server it started
    assert done.stderr.count("\n") == 1 and done.stderr.startswith("error:"), done.stderr
    assert "Warning" not in done.stderr

"""Every documented exit code, as a shell sees it: the installed `stitcher` script in a subprocess.

main() and CliRunner are not enough: main once *returned* 0 for `typer.Exit(3)` because click, out
of standalone mode, hands the code back instead of exiting; every CliRunner test passed while the
shell saw 0. So each code of stitcher.errors.ExitStatus is provoked here for real, through the
console script that `pip install` generated, importing this checkout (PYTHONPATH).
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from stitcher import errors
from stitcher.errors import ExitStatus

REPO = Path(__file__).resolve().parent.parent

#: A file name rich would take for markup: `[red]` is a style, `[draft]` an unknown tag.
MARKUP_NAME = "report [draft] [red].txt"


def stitcher_script() -> Path:
    """The console script installed next to this interpreter (pip's `stitcher = cli:main`)."""
    script = Path(sys.executable).with_name("stitcher")
    if not script.is_file():
        pytest.fail(f"no `stitcher` script next to {sys.executable}: run `make setup`", False)
    return script


def script_environment(**changes: str) -> dict[str, str]:
    """The session's environment (its STITCHER_HOME, so its server), importing this checkout."""
    env = {**os.environ, **changes}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), os.environ.get("PYTHONPATH")]))
    return env


def run_stitcher(
    *args: str, env: dict[str, str] | None = None, input_text: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(stitcher_script()), *args],
        env=env or script_environment(),
        input=input_text,
        stdin=None if input_text is not None else subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=600,
    )


def assert_one_error_line(stderr: str) -> str:
    """stderr holds exactly one `error:` line and no traceback; returns that line."""
    assert "Traceback" not in stderr and "MarkupError" not in stderr, stderr
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, stderr
    return errors[0]


def test_the_enum_is_the_documented_table() -> None:
    """The README's table and the enum are one list: a code added to one must reach the other."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    rows = dict(re.findall(r"^\| `(\d+)` \| `(\w+)` \|", readme, flags=re.MULTILINE))
    assert {int(code): name for code, name in rows.items()} == {s.value: s.name for s in ExitStatus}


# --- codes that need no server ---------------------------------------------------------------


def test_ok_is_0(tmp_path: Path) -> None:
    result = run_stitcher("server", "status", env=script_environment(STITCHER_HOME=str(tmp_path)))
    assert result.returncode == ExitStatus.OK, result.stderr
    assert "stopped" in result.stdout


@pytest.mark.parametrize(
    ("args", "mentioned"),
    [
        (["search", "   "], "query"),
        (["search", "x", "--no-such-flag"], "--no-such-flag"),
        (["search", "x", "--alpha", "1.5"], "alpha"),
        (["drop", "--collection", "Nothing"], "--yes"),
    ],
)
def test_usage_errors_are_2(args: list[str], mentioned: str) -> None:
    result = run_stitcher(*args)
    assert result.returncode == ExitStatus.USAGE == 2, result.stderr
    assert result.stdout == "" and mentioned in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize(
    ("kind", "status"),
    [
        (errors.UsageError, ExitStatus.USAGE),
        (errors.AmbiguousError, ExitStatus.USAGE),
        (errors.FilterError, ExitStatus.USAGE),
        (errors.ConfigInvalid, ExitStatus.USAGE),
        (errors.LockHeld, ExitStatus.BUSY),
        (errors.PruneRefused, ExitStatus.PRUNE_REFUSED),
        (errors.ServerError, ExitStatus.FAILED),
        (errors.WriteFailed, ExitStatus.FAILED),
        (errors.ListingIncomplete, ExitStatus.FAILED),
        (errors.StitcherError, ExitStatus.FAILED),
    ],
)
def test_each_kind_of_error_has_one_exit_status(kind: type, status: ExitStatus) -> None:
    assert errors.exit_status_of(kind("message")) is status
    assert kind("message").exit_status is status


def test_the_library_names_settings_and_the_cli_spells_them_as_flags() -> None:
    """The core's message speaks of the value (`limit`); only the CLI's boundary says `--limit`."""
    from stitcher.search import SearchOptions

    with pytest.raises(errors.UsageError) as refused:
        SearchOptions(limit=0).validate()
    assert str(refused.value) == "limit must be at least 1"

    result = run_stitcher("search", "x", "--limit", "0")
    assert result.returncode == ExitStatus.USAGE, result.stderr
    assert assert_one_error_line(result.stderr) == "error: --limit must be at least 1"


def test_a_suggested_value_becomes_flag_and_value(weaviate_server: Any, tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "docs")
    result = run_stitcher("ingest", str(corpus), "-c", _collection(), "--chunk-size", "10")
    assert result.returncode == ExitStatus.USAGE, result.stderr
    error = assert_one_error_line(result.stderr)
    assert "use --chunk-size 20 or more" in error and "chunk_size" not in error

    with pytest.raises(errors.UsageError, match="use chunk_size=20 or more"):
        from stitcher.chunking import validate_chunk_settings

        validate_chunk_settings(10, 0)


def _library_sources() -> dict[str, str]:
    """Every module of the core (not the command line), by path relative to the repository."""
    front_end = REPO / "stitcher" / "cli"
    return {
        str(path.relative_to(REPO)): path.read_text(encoding="utf-8")
        for path in sorted((REPO / "stitcher").rglob("*.py"))
        if front_end not in path.parents and path.name != "render.py"
    }


def test_every_setting_the_library_names_is_a_flag_of_the_cli() -> None:
    from stitcher.cli.root import flags_of_settings

    named = {
        name
        for text in _library_sources().values()
        for name in re.findall(r"\bsetting\(\s*[\'\"]([a-z_]+)[\'\"]", text)
    }
    assert {"limit", "chunk_size", "wait", "max_delete"} <= named  # the scan finds them
    assert named - set(flags_of_settings()) == set()


#: Core modules whose messages still spell flags; each should name settings instead
#: (stitcher.errors.setting). The list may only shrink.
FLAGS_STILL_SPELLED = {
    "stitcher/loaders/rewrap.py",  # not messages: man-page text it recognises ("-a, --all")
}


def _spelled_flags(source: str, flags: set[str]) -> list[str]:
    """The CLI's flags written into the string literals of `source` (docstrings and command
    examples in backticks, `stitcher ingest --prune`, are not messages about a setting)."""
    import ast

    tree = ast.parse(source)
    skipped: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr):
            skipped.add(id(body[0].value))
        if isinstance(node, ast.JoinedStr):
            skipped.update(id(part) for part in node.values)
    found = []
    for node in ast.walk(tree):
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
        elif isinstance(node, ast.JoinedStr):
            text = "".join(p.value if isinstance(p, ast.Constant) else "{}" for p in node.values)
        else:
            continue
        text = re.sub(r"`stitcher [^`]*`", "", text)
        found += [f for f in re.findall(r"(?<![\w-])--[a-z][a-z-]*", text) if f in flags]
    return found


def test_core_messages_name_settings_not_flags() -> None:
    from stitcher.cli.root import flags_of_settings

    flags = set(flags_of_settings().values())
    spelling = {path for path, text in _library_sources().items() if _spelled_flags(text, flags)}
    assert spelling - FLAGS_STILL_SPELLED == set(), "name the setting: stitcher.errors.setting"
    assert FLAGS_STILL_SPELLED - spelling == set(), "no flags left there: shorten the list"
    assert _spelled_flags('x = f"use --limit {n} (`stitcher search --limit 3`)"', flags) == [
        "--limit"
    ]


def test_a_message_carried_into_another_keeps_its_settings_named() -> None:
    """An error's message put into another message or a summary still names its settings, so
    the CLI can spell them as flags; the library reads them by their names."""
    from stitcher.ingest import IngestSummary

    inner = errors.LoadError(f"docs: ingest each folder with its own {errors.setting('source')}")
    outer = errors.WriteFailed(f"{inner.unworded}; nothing was written")
    assert str(outer) == "docs: ingest each folder with its own source; nothing was written"
    assert outer.worded({"source": "--source"}).endswith("its own --source; nothing was written")

    summary = IngestSummary(collection="Docs")
    summary.unreadable_because("docs", inner)
    summary.failed["tea.txt"] = "failed while embedding the document"
    assert summary.unreadable == {"docs": "docs: ingest each folder with its own source"}
    assert summary.problems() == {**summary.unreadable, **summary.failed}
    spelled = summary.problems(lambda text: errors.worded(text, {"source": "--source"}))
    assert spelled["docs"].endswith("its own --source")
    assert spelled["tea.txt"] == "failed while embedding the document"
    assert json.dumps(summary.to_json()).count("\\u001f") == 0  # no marker reaches --json


def test_a_malformed_url_names_the_flag_through_the_script() -> None:
    result = run_stitcher("search", "x", "--url", "not-a-url")
    assert result.returncode == ExitStatus.FAILED, result.stderr
    error = assert_one_error_line(result.stderr)
    assert "'not-a-url'" in error and error.endswith("fix --url or WEAVIATE_URL")


def test_an_unreachable_server_is_1_and_names_the_url() -> None:
    result = run_stitcher("search", "x", "--url", "http://127.0.0.1:9", "--grpc-port", "10")
    assert result.returncode == ExitStatus.FAILED == 1
    assert "http://127.0.0.1:9" in assert_one_error_line(result.stderr)
    assert result.stdout == ""


def test_a_stale_server_status_is_1(tmp_path: Path) -> None:
    """server.json names a pid that is gone: the status says "stale" and the shell sees 1."""
    home = tmp_path / "home [draft] [red]"  # printed in the status table: must stay verbatim
    home.mkdir()
    finished = subprocess.Popen(["true"])
    finished.wait()
    ports = {f"{name}_port": 1 + i for i, name in enumerate(("http", "grpc", "gossip", "data"))}
    state = {"pid": finished.pid, **ports, "raft_port": 5}
    (home / "server.json").write_text(json.dumps(state), encoding="utf-8")

    result = run_stitcher("server", "status", env=script_environment(STITCHER_HOME=str(home)))
    assert result.returncode == ExitStatus.FAILED, result.stderr
    unwrapped = "".join(result.stdout.split())  # the table wraps long paths at spaces
    assert "stale" in result.stdout and "".join(str(home).split()) in unwrapped
    error = assert_one_error_line(result.stderr)
    assert str(finished.pid) in error and str(home) in error

    as_json = run_stitcher(
        "server", "status", "--json", env=script_environment(STITCHER_HOME=str(home))
    )
    assert as_json.returncode == ExitStatus.FAILED
    assert json.loads(as_json.stdout)["state"] == "stale"


# --- codes of a real ingest (the session's server) -------------------------------------------


def _corpus(root: Path, names: Sequence[str] = ("rail.txt", "tea.txt")) -> Path:
    from tests.test_ingest import EN, ZH

    root.mkdir(parents=True, exist_ok=True)
    for i, name in enumerate(names):
        (root / name).write_text(EN if i % 2 == 0 else ZH, encoding="utf-8")
    return root


def _collection() -> str:
    return "Exit" + uuid.uuid4().hex[:10]


def test_two_folders_of_one_name_are_unreadable_and_the_fix_names_the_flag(
    weaviate_server: Any, tmp_path: Path
) -> None:
    """The listing's error travels through the ingest summary to stderr: still `--source`."""
    first, second = _corpus(tmp_path / "a" / "docs"), _corpus(tmp_path / "b" / "docs")
    result = run_stitcher("ingest", str(first), str(second), "-c", _collection())
    assert result.returncode == ExitStatus.UNREADABLE, result.stderr
    error = assert_one_error_line(result.stderr)
    assert str(second) in error and error.endswith("each with its own --source")


def test_a_missing_collection_names_the_others_but_no_bookkeeping(
    weaviate_server: Any, weaviate_client: Any
) -> None:
    from stitcher.store.weaviate import WeaviateStore
    from stitcher.testing import SETTINGS

    other = WeaviateStore(weaviate_client, _collection())
    other.create(SETTINGS)
    other.register_source("docs", "/somewhere/docs")  # the sources bookkeeping collection
    try:
        result = run_stitcher("search", "x", "-c", _collection())
        assert result.returncode == ExitStatus.FAILED, result.stderr
        error = assert_one_error_line(result.stderr)
        assert "does not exist; existing collections: " in error and other.name in error
        assert "StitcherSources" not in error and "StitcherLease" not in error
    finally:
        other.drop()


def test_ingest_ok_is_0_and_unreadable_inputs_are_3(weaviate_server: Any, tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "docs")
    (corpus / MARKUP_NAME).symlink_to(corpus / "gone.txt")  # broken: unreadable
    name = _collection()

    first = run_stitcher("ingest", str(corpus), "--collection", name)
    assert first.returncode == ExitStatus.UNREADABLE == 3, first.stderr
    assert first.stdout.count("\n") == 1 and "2 added" in first.stdout
    assert "1 unreadable" in first.stdout
    assert MARKUP_NAME in assert_one_error_line(first.stderr)

    (corpus / MARKUP_NAME).unlink()
    second = run_stitcher("ingest", str(corpus), "--collection", name)
    assert second.returncode == ExitStatus.OK, second.stderr
    assert "2 unchanged" in second.stdout and "unreadable" not in second.stdout


def test_documents_that_cannot_be_written_are_1(weaviate_server: Any, tmp_path: Path) -> None:
    """Two documents disagree on the type of a front-matter field: whichever is stored first
    defines the property, the other's chunks cannot be written — "1 failed", exit 1."""
    corpus = _corpus(tmp_path / "docs")
    (corpus / "a.md").write_text("---\nrating: 5\n---\nThe first note.\n", encoding="utf-8")
    (corpus / "b.md").write_text("---\nrating: high\n---\nThe second note.\n", encoding="utf-8")

    result = run_stitcher("ingest", str(corpus), "--collection", _collection())
    assert result.returncode == ExitStatus.FAILED == 1, result.stderr
    assert "1 failed" in result.stdout and "3 added" in result.stdout
    assert "rating" in assert_one_error_line(result.stderr)


def test_a_second_ingest_while_one_runs_is_5(weaviate_server: Any, tmp_path: Path) -> None:
    from stitcher.api import Stitcher
    from stitcher.locks import local_lock

    name = _collection()
    holder = Stitcher(collection=name)
    with local_lock(holder.connection, name, wait=False, command="ingest", source="docs"):
        result = run_stitcher("ingest", str(_corpus(tmp_path / "docs")), "--collection", name)
    assert result.returncode == ExitStatus.BUSY == 5, result.stderr
    assert "--wait" in assert_one_error_line(result.stderr)
    assert result.stdout == ""


def sigint_as_from_a_terminal() -> None:
    """`preexec_fn` for a child that a test interrupts: SIGINT handled by default, as a terminal
    or cron starts it, even when the test run itself was started in the background (SIG_IGN,
    which the child would inherit and, like any Python program, keep)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_sigint_to_a_running_ingest_is_130(weaviate_server: Any, tmp_path: Path) -> None:
    """The ingest reads its paths from a stdin we keep open: it runs, and blocks in that read —
    there is no race about where the signal lands. We see it there in /proc (a read of fd 0)."""
    name = _collection()
    proc = subprocess.Popen(
        [str(stitcher_script()), "ingest", "-", "--collection", name],
        env=script_environment(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=sigint_as_from_a_terminal,
    )
    try:
        while not _reads_stdin(proc.pid):
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == ExitStatus.INTERRUPTED == 130, stderr
    assert stdout == "" and "interrupted" in stderr and "Traceback" not in stderr


def _reads_stdin(pid: int) -> bool:
    """Whether the process is blocked in read(0, ...) (syscall 0 on x86-64, 63 on arm64)."""
    try:
        fields = Path(f"/proc/{pid}/syscall").read_text().split()
    except OSError:
        return False
    return len(fields) > 1 and fields[0] in ("0", "63") and int(fields[1], 16) == 0


def test_prune_of_an_empty_folder_is_refused_with_4(weaviate_server: Any, tmp_path: Path) -> None:
    """A folder that is suddenly empty (an unmounted share) must not prune the collection."""
    corpus = _corpus(tmp_path / "docs")
    name = _collection()
    assert run_stitcher("ingest", str(corpus), "--collection", name).returncode == 0
    for path in corpus.iterdir():
        path.unlink()

    result = run_stitcher("ingest", str(corpus), "--collection", name, "--prune")
    assert result.returncode == ExitStatus.PRUNE_REFUSED == 4, result.stderr
    assert_one_error_line(result.stderr)
    stats = run_stitcher("stats", "--collection", name, "--json")
    assert json.loads(stats.stdout)["documents"] == 2


@pytest.fixture
def sigint_as_started(request: pytest.FixtureRequest) -> Iterator[None]:
    """SIGINT handled as a terminal or cron starts a process (Python's default handler), or
    ignored as `nohup` and `cmd &` leave it (param "ignored"); a test run started in the
    background inherits SIG_IGN, so neither is left to chance. Restored afterwards."""
    ignored = getattr(request, "param", "") == "ignored"
    previous = signal.signal(
        signal.SIGINT, signal.SIG_IGN if ignored else signal.default_int_handler
    )
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def test_a_failure_that_follows_an_interrupt_is_130(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], sigint_as_started: None
) -> None:
    """SIGINT can land inside a library that turns KeyboardInterrupt into its own error
    (pydantic reported "SchemaError: Error building validator" when Ctrl-C hit a deferred model
    build during an ingest's start): the exit is still 130, not 1."""
    import os

    from stitcher.cli import boundary

    def interrupted_inside_a_library(**_: Any) -> None:
        try:
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(5)  # the handler raises KeyboardInterrupt before this ends
        except KeyboardInterrupt as exc:
            raise RuntimeError("Error building validator") from exc

    monkeypatch.setattr(boundary, "app", interrupted_inside_a_library)
    assert boundary.main(["stats"]) == ExitStatus.INTERRUPTED == 130
    assert "interrupted" in capsys.readouterr().err
    # and without an interrupt the same error stays a failure
    monkeypatch.setattr(boundary, "app", lambda **_: (_ for _ in ()).throw(RuntimeError("boom")))
    assert boundary.main(["stats"]) == ExitStatus.FAILED
    assert signal.getsignal(signal.SIGINT) is signal.default_int_handler


@pytest.mark.parametrize("sigint_as_started", ["ignored"], indirect=True)
def test_a_process_started_with_sigint_ignored_keeps_ignoring_it(
    monkeypatch: pytest.MonkeyPatch, sigint_as_started: None
) -> None:
    """`nohup stitcher ingest ...` (or `stitcher ingest ... &` in a script): a Ctrl-C meant for
    the parent does not stop the load, as with any Python program started so."""
    import os

    from stitcher.cli import boundary

    def work(**_: Any) -> None:
        os.kill(os.getpid(), signal.SIGINT)
        time.sleep(0.2)  # long enough for a handler, had one been installed, to run

    monkeypatch.setattr(boundary, "app", work)
    assert boundary.main(["stats"]) == ExitStatus.OK
    assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN

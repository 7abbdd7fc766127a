"""The CLI surface: fast help, help text on every command, exit codes, stdout vs stderr."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.main import get_command
from typer.testing import CliRunner

from stitcher.cli import app, main

# at the top: `connecting` reads a command's annotations in its module's namespace
from stitcher.cli.options import GrpcOpt, KeyOpt, ServerFlags, UrlOpt, connecting
from stitcher.errors import ExitStatus, LockHeld, PruneRefused

HEAVY = (
    "torch",
    "sentence_transformers",
    "transformers",
    "weaviate",
    "onnxruntime",
    "langchain_core",
)


def test_importing_the_cli_imports_nothing_heavy() -> None:
    code = (
        "import sys, json; import stitcher.cli; "
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(out.stdout) == []


def test_help_does_not_import_heavy_modules() -> None:
    code = (
        "import sys, json\nfrom stitcher.cli import main\n"
        "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
        f"print('HEAVY=' + json.dumps([m for m in {HEAVY!r} if m in sys.modules]))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "HEAVY=[]" in out.stdout


def _commands(typer_app: object, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    from typer.main import get_command

    group = get_command(typer_app)  # type: ignore[arg-type]
    out = []
    for name, cmd in group.commands.items():  # type: ignore[attr-defined]
        out.append((*prefix, name))
        if hasattr(cmd, "commands"):
            for sub in cmd.commands:
                out.append((*prefix, name, sub))
    return out


def test_every_command_has_help_text() -> None:
    runner = CliRunner()
    commands = _commands(app)
    assert ("search",) in commands and ("server", "start") in commands
    for path in commands:
        result = runner.invoke(app, [*path, "--help"])
        assert result.exit_code == 0, path
        assert "Usage" in result.output and len(result.output) > 100, path


def test_empty_query_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "  "]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "query" in captured.err.lower()


def test_unknown_option_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "x", "--no-such-flag"]) == 2
    assert "no-such-flag" in capsys.readouterr().err


def test_bad_alpha_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["search", "x", "--alpha", "1.5"]) == 2
    assert "alpha" in capsys.readouterr().err


def test_drop_needs_yes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["drop", "--collection", "Nothing"]) == 2
    assert "--yes" in capsys.readouterr().err


def test_unreachable_server_is_one_line_and_exit_1(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(["search", "x", "--url", "http://127.0.0.1:9", "--grpc-port", "10"])
    err = capsys.readouterr().err
    assert code == 1
    assert "127.0.0.1:9" in err and "Traceback" not in err


def test_a_second_ingest_exits_while_the_first_holds_the_lock(
    tmp_path: object, capsys: pytest.CaptureFixture[str], weaviate_server: object
) -> None:
    # The ingest connects (its replication check) before it takes the lock: with the session's
    # server, which the session stops, rather than one started here and left running.
    from pathlib import Path

    from stitcher.api import Stitcher
    from stitcher.locks import local_lock

    holder = Stitcher(collection="LockTest")
    source = Path(str(tmp_path)).name  # the folder's documents are "<its name>/..."
    with local_lock(
        holder.connection, holder.collection, wait=False, command="ingest", source=source
    ):
        code = main(["ingest", str(tmp_path), "--collection", "LockTest"])
    err = capsys.readouterr().err
    assert code == ExitStatus.BUSY == 5 and "another ingest" in err and "--wait" in err


def test_every_command_is_documented_in_the_handwritten_docs() -> None:
    """Beyond the generated reference: each command is named in the README or a docs page."""
    import re
    from pathlib import Path

    root = Path(__file__).resolve().parent.parent
    pages = [root / "README.md", *sorted((root / "docs").glob("*.md"))]
    pages = [page for page in pages if page.name != "cli-reference.md"]
    readme = "\n".join(page.read_text(encoding="utf-8") for page in pages)

    def documented(path: tuple[str, ...]) -> bool:
        if f"stitcher {' '.join(path)}" in readme:
            return True
        # sub-commands are listed as `stitcher server install | start | stop | status`
        return len(path) == 2 and bool(
            re.search(rf"stitcher {path[0]} [^\n]*\b{path[1]}\b", readme)
        )

    assert [p for p in _commands(app) if not documented(p)] == []


# --- exit statuses: whatever way a command ends reaches main's return value ------------------


def _raising(error: BaseException) -> Callable[[], None]:
    def probe() -> None:
        raise error

    return probe


@pytest.mark.parametrize(
    ("command", "status"),
    [
        (lambda: None, 0),
        (_raising(typer.Exit(3)), 3),
        (_raising(typer.Exit(ExitStatus.PRUNE_REFUSED)), 4),
        (_raising(SystemExit(7)), 7),
        (_raising(SystemExit(None)), 0),
        (_raising(KeyboardInterrupt()), 130),
        (_raising(typer.Abort()), 130),
        (_raising(PruneRefused("refused")), 4),
        (_raising(LockHeld("busy")), 5),
    ],
    ids=["return", "Exit(3)", "Exit(enum)", "SystemExit(7)", "SystemExit(None)", "Ctrl-C",
         "Abort", "PruneRefused", "LockHeld"],
)  # fmt: skip
def test_every_way_a_command_ends_is_the_exit_status(
    command: Callable[[], None], status: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    probe_app = typer.Typer()
    probe_app.command("probe")(command)
    probe_app.command("other")(lambda: None)  # two commands: `probe` stays a sub-command
    monkeypatch.setattr("stitcher.cli.boundary.app", probe_app)
    assert main(["probe"]) == status


# --- the server options: declared once, handed to each command as one ------------------------


def test_a_connecting_command_gets_the_server_options_last_and_as_one() -> None:
    received: list[tuple[str, ServerFlags]] = []

    @connecting
    def probe(name: str, *, server: ServerFlags) -> None:
        received.append((name, server))

    probe_app = typer.Typer()
    probe_app.command("probe")(probe)
    probe_app.command("other")(lambda: None)
    args = ["probe", "x", "--url", "http://far:1", "--api-key", "k", "--grpc-port", "7"]
    result = CliRunner().invoke(probe_app, args)
    assert result.exit_code == 0, result.output
    assert received == [("x", ServerFlags("http://far:1", "k", 7))]
    assert CliRunner().invoke(probe_app, ["probe", "y"]).exit_code == 0
    assert received[-1] == ("y", ServerFlags())
    names = [param.name for param in get_command(probe_app).commands["probe"].params]
    assert names == ["name", "url", "api_key", "grpc_port"]


def test_every_command_with_url_takes_the_shared_server_options() -> None:
    options = {"url": UrlOpt, "api_key": KeyOpt, "grpc_port": GrpcOpt}
    shared = {name: option.__metadata__[0].help for name, option in options.items()}
    connecting = [path for path in _commands(app) if "url" in _param_names(path)]
    assert len(connecting) > 10  # the walk found them
    for path in connecting:
        command = _command_at(path)
        helps = {p.name: p.help for p in command.params if p.name in shared}
        assert helps == shared, path
        assert [p.name for p in command.params][-3:] == list(shared), path


def _command_at(path: tuple[str, ...]) -> Any:
    command = get_command(app)
    for name in path:
        command = command.commands[name]  # type: ignore[attr-defined]
    return command


def _param_names(path: tuple[str, ...]) -> set[str]:
    return {param.name for param in _command_at(path).params}


# --- user text is never rich markup ----------------------------------------------------------

MARKUP = "report [draft] [red] [/x] [bold]"


def _render(draw: object) -> str:
    """What a render function prints on a Console with rich's defaults (markup on)."""
    import io

    from rich.console import Console

    console = Console(file=io.StringIO(), width=200, color_system=None, highlight=True)
    draw(console)  # type: ignore[operator]
    return console.file.getvalue()  # type: ignore[attr-defined]


def test_render_shows_user_text_verbatim_even_on_a_markup_console() -> None:
    from types import SimpleNamespace

    from stitcher import render
    from stitcher.models import Passage
    from stitcher.search import SearchResult

    passage = Passage(
        text="Text with [bold]brackets[/bold] and [/x].",
        source=f"docs/{MARKUP}.txt",
        doc_id=f"docs/{MARKUP}.txt",
        score=0.5,
        hit_ids=("a",),
        chunk_ids=("a",),
        start=3,
        end=44,
        truncated=False,
        hit_spans=((3, 20),),
    )
    shown = _render(lambda c: render.search_results(c, SearchResult("q", [passage], 1.0, 1)))
    assert f"1. docs/{MARKUP}.txt  [3:44]" in shown
    assert "Text with [bold]brackets[/bold] and [/x]." in shown

    none = _render(lambda c: render.search_results(c, SearchResult(f"q {MARKUP}", [], 1.0, 1)))
    assert repr(f"q {MARKUP}") in none

    stats = {"collection": "Stitcher", "documents": 1, "sources": {f"{MARKUP}.txt": 3}}
    assert f"{MARKUP}.txt" in _render(lambda c: render.stats_table(c, stats, documents=True))
    assert MARKUP in _render(lambda c: render.key_value_table(c, MARKUP, [(MARKUP, MARKUP)]))
    field = SimpleNamespace(name="source", kind="text", examples=(MARKUP,))
    assert MARKUP in _render(lambda c: render.fields_table(c, [field]))
    status = {"data_path": f"/srv/{MARKUP}", "collections": [{"name": MARKUP, "objects": 2}]}
    shown = _render(lambda c: render.server_status(c, status))
    assert f"/srv/{MARKUP}" in shown and f"{MARKUP} (2 objects)" in shown
    assert MARKUP in _render(lambda c: render.QuietDisplay(c).notice(MARKUP))
    assert MARKUP in _render(lambda c: render.IngestDisplay(c).notice(MARKUP))


def test_an_error_message_with_markup_prints_verbatim(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["drop", "--collection", "A[/x][red]"]) == ExitStatus.USAGE
    captured = capsys.readouterr()
    assert captured.err.startswith("error: this deletes every object in 'A[/x][red]';")
    assert captured.err.count("\n") == 1


def test_an_unexpected_error_is_one_line_and_a_hint(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken_status() -> None:
        raise RuntimeError(f"boom {MARKUP}\n  the server said: {'x' * 300}\n  and more")

    monkeypatch.setattr("stitcher.server.status", broken_status)
    assert main(["server", "status"]) == ExitStatus.FAILED
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        f"error: unexpected RuntimeError: boom {MARKUP} …",
        "Run again with STITCHER_TRACEBACK=1 for the traceback.",
    ]


def test_a_markup_collection_name_is_a_one_line_usage_error() -> None:
    """It used to die with a MarkupError traceback inside the error handler."""
    from tests.test_exit_codes import assert_one_error_line, run_stitcher

    result = run_stitcher("search", "--latest", "-c", "Bad[/x]")
    assert result.returncode == ExitStatus.USAGE, result.stderr
    assert "'Bad[/x]'" in assert_one_error_line(result.stderr)
    assert result.stdout == "" and result.stderr.count("\n") == 1


def test_a_markup_file_name_is_shown_verbatim_by_ingest_and_search(
    weaviate_server: object, tmp_path: Path
) -> None:
    import re
    import uuid

    from tests.test_exit_codes import run_stitcher, script_environment

    name = "report [draft] [red].txt"
    corpus = tmp_path / "docs"
    corpus.mkdir()
    (corpus / name).write_text(
        "The lighthouse keeper logged every passing ship. Storms were noted in red ink.",
        encoding="utf-8",
    )
    collection = "Markup" + uuid.uuid4().hex[:8]
    dry = run_stitcher("ingest", str(corpus), "-c", collection, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert f"  would add: docs/{name}" in dry.stdout.splitlines()

    assert run_stitcher("ingest", str(corpus), "-c", collection).returncode == 0
    wide = script_environment(COLUMNS="400")  # the panel title holds an absolute path
    found = run_stitcher("search", "lighthouse", "-c", collection, "--limit", "1", env=wide)
    assert found.returncode == 0, found.stderr
    assert re.search(rf"─ 1\. /\S.*/docs/{re.escape(name)}:1  \[0:\d+\] ─", found.stdout)
    stats = run_stitcher("stats", "-c", collection, "--documents", env=wide)
    assert f"docs/{name}" in stats.stdout


def _flattened(text: str) -> str:
    """Help as words: rich's box drawing and the column padding of wrapped lines removed."""
    return " ".join(re.sub(r"[\u2500-\u257f]", " ", text).split())


def test_help_shows_every_help_text_as_written() -> None:
    # Typer parses help as rich markup: "[env: WEAVIATE_URL]" was taken for a style tag and
    # vanished, leaving "Weaviate URL . Default: ...". Every option's help must print verbatim.
    from typer.main import get_command

    runner = CliRunner()
    for path in [(), *_commands(app)]:
        command = get_command(app)
        for name in path:
            command = command.commands[name]  # type: ignore[attr-defined]
        result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "300"})
        assert result.exit_code == 0, path
        shown = _flattened(result.output)
        if command.help:
            summary = command.help.split("\n\n")[0]
            assert _flattened(summary) in shown, (path, summary)
        for param in command.params:
            written = getattr(param, "help", None)
            if written:
                assert _flattened(written) in shown, (path, param.name, written)


def test_command_lists_show_each_summary_on_one_line() -> None:
    # typer's command list keeps a docstring's own line breaks in rich mode, so `stitcher
    # --help` showed "...; safe to re-run:" and the rest of the sentence on a line of its own.
    from typer.main import get_command

    from tests.test_exit_codes import run_stitcher, script_environment

    # typer reads the width when it is imported: a fresh process, wide enough for no wrapping.
    wide = script_environment(COLUMNS="400", TERMINAL_WIDTH="400")
    groups = [(), *(path for path in _commands(app) if len(path) == 1)]
    for path in groups:
        group = get_command(app)
        for name in path:
            group = group.commands[name]  # type: ignore[attr-defined]
        if not hasattr(group, "commands"):
            continue
        shown = run_stitcher(*path, "--help", env=wide).stdout
        for name, command in group.commands.items():
            summary = _flattened((command.help or "").split("\n\n")[0])
            rows = [line for line in shown.splitlines() if f" {name} " in line]
            assert any(summary in _flattened(row) for row in rows), (path, name, rows)


# --- commands on a store a test gives (stitcher.testing.cli_on_stores) ------------------------


def test_commands_open_the_given_stores_and_search_in_process(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from stitcher import warm
    from stitcher.cli.library import opened_in_process
    from stitcher.ingest import ingest
    from stitcher.store.memory import MemoryStore
    from stitcher.testing import cli_on_stores
    from tests.fakes import FakeEmbedder

    def no_worker(*args: Any) -> Any:
        raise AssertionError("the warm worker opens its collection on a server")

    monkeypatch.setattr(warm, "search", no_worker)
    monkeypatch.setattr(warm, "search_request", no_worker)
    (tmp_path / "birds.txt").write_text(
        "Birds navigate at night by the stars. They also read the magnetic field.", "utf-8"
    )
    store = MemoryStore("Given")
    assert ingest(store, [str(tmp_path)], model_name=FakeEmbedder.name, embedder=FakeEmbedder).added
    opened: list[tuple[str, str | None]] = []

    def open_store(name: str, tenant: str | None) -> MemoryStore:
        opened.append((name, tenant))
        return store.sibling(name)

    with cli_on_stores(open_store, FakeEmbedder()):
        assert opened_in_process()
        assert main(["search", "birds at night", "-c", "Given", "--warm", "--json"]) == 0
        found = json.loads(capsys.readouterr().out)
        assert [r["doc_id"] for r in found["results"]] == [f"{tmp_path.name}/birds.txt"]
        assert main(["search", "birds", "-c", "Missing"]) == ExitStatus.FAILED
        assert "'Missing' does not exist" in capsys.readouterr().err
    assert opened == [("Given", None), ("Missing", None)]
    assert not opened_in_process()  # commands connect to a server again

"""The CLI surface: fast help, help text on every command, exit codes, stdout vs stderr."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from typer.testing import CliRunner

from stitcher.cli import app, main
from stitcher.errors import ExitStatus

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
    tmp_path: object, capsys: pytest.CaptureFixture[str]
) -> None:
    from stitcher.api import Stitcher

    holder = Stitcher(collection="LockTest")
    with holder._ingest_lock(wait=False):
        code = main(["ingest", str(tmp_path), "--collection", "LockTest"])
    err = capsys.readouterr().err
    assert code == ExitStatus.BUSY == 5 and "another ingest" in err and "--wait" in err


def test_every_command_is_documented_in_the_readme() -> None:
    import re
    from pathlib import Path

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")

    def documented(path: tuple[str, ...]) -> bool:
        if f"stitcher {' '.join(path)}" in readme:
            return True
        # sub-commands are listed as `stitcher server install | start | stop | status`
        return len(path) == 2 and bool(
            re.search(rf"stitcher {path[0]} [^\n]*\b{path[1]}\b", readme)
        )

    assert [p for p in _commands(app) if not documented(p)] == []

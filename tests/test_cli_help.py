"""Every command's help fits 80 columns, and global options are accepted after the command."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.main import get_command

from stitcher.cli import app, main
from stitcher.cli.help import reorder_global_options
from tests.test_exit_codes import run_stitcher, script_environment


def _command_paths() -> list[tuple[str, ...]]:
    """Every registered command and group, from the app itself (a new one is covered at once)."""
    found: list[tuple[str, ...]] = []
    pending: list[tuple[tuple[str, ...], object]] = [((), get_command(app))]
    while pending:
        path, command = pending.pop()
        found.append(path)
        for name, sub in (getattr(command, "commands", None) or {}).items():
            pending.append(((*path, name), sub))
    return sorted(found)


COMMANDS = _command_paths()

#: Lines of `--help` at 80 columns: the two big commands get more room than the rest.
LINE_BUDGET = {("ingest",): 60, ("search",): 60}
DEFAULT_BUDGET = 45

#: A Python type where a metavar belongs: `<bool>`, `<list[str]>`, `<int range>`, `<str>`.
TYPE_LABEL = re.compile(r"<(bool|str|int|float|list|path|tuple)\b")

NARROW = {"COLUMNS": "80", "TERMINAL_WIDTH": "80", "NO_COLOR": "1"}


def test_the_walk_finds_commands_and_groups() -> None:
    assert ("ingest",) in COMMANDS and ("server", "status") in COMMANDS and () in COMMANDS
    assert len(COMMANDS) > 20


@pytest.mark.parametrize("path", COMMANDS, ids=lambda path: " ".join(path) or "stitcher")
def test_help_fits_80_columns(path: tuple[str, ...]) -> None:
    result = run_stitcher(*path, "--help", env=script_environment(**NARROW))
    assert result.returncode == 0, result.stderr
    shown = result.stdout
    assert "Usage:" in shown
    assert not TYPE_LABEL.search(shown), shown  # flags show nothing, values a metavar
    assert "<list" not in shown and "<bool>" not in shown
    assert "…" not in shown, shown  # nothing cut
    assert max(map(len, shown.splitlines())) <= 80
    budget = LINE_BUDGET.get(path, DEFAULT_BUDGET)
    assert len(shown.splitlines()) <= budget, (len(shown.splitlines()), shown)


def test_flags_show_no_placeholder_and_values_a_metavar() -> None:
    shown = run_stitcher("ingest", "--help", env=script_environment(**NARROW)).stdout
    rows = {line.split()[1]: line for line in shown.splitlines() if line.startswith("│ --")}
    assert rows["--prune"].split()[2] == "Delete"  # the help text right after the flag
    assert rows["--chunk-size"].split()[2] == "N"
    assert rows["--mentions-from"].split()[2] == "FILE"
    assert "--no-prune" not in shown  # a plain flag, no --no- twin


@pytest.mark.parametrize("path", COMMANDS, ids=lambda path: " ".join(path) or "stitcher")
def test_dash_h_is_help(path: tuple[str, ...], capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*path, "-h"]) == 0
    assert "Usage:" in capsys.readouterr().out


@pytest.mark.parametrize("path", [("ingest",), ("server", "status"), ()], ids=str)
@pytest.mark.parametrize("flag", ["-V", "--version"])
def test_version_works_everywhere(
    path: tuple[str, ...], flag: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*path, flag]) == 0
    assert capsys.readouterr().out.startswith("stitcher ")


@pytest.mark.parametrize("path", [p for p in COMMANDS if p], ids=" ".join)
@pytest.mark.parametrize("option", [["-q"], ["--quiet"], ["--verbose"], ["--profile", "far"]])
def test_global_options_are_accepted_after_the_command(
    path: tuple[str, ...],
    option: list[str],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _write_profiles(tmp_path)
    monkeypatch.chdir(tmp_path)
    # --help ends the command before it does anything; click still rejects an unknown option
    # first ("No such option: -q" before the fix).
    assert main([*path, *option, "--help"]) == 0, capsys.readouterr().err
    assert "No such option" not in capsys.readouterr().err


def _write_profiles(folder: Path) -> None:
    (folder / "stitcher.toml").write_text(
        '[profiles.far]\ncollection = "FarAway"\n', encoding="utf-8"
    )


def test_profile_after_the_command_selects_the_profile(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _write_profiles(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["config", "show", "--json", "--profile", "far"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["profile"] == "far"
    assert data["settings"]["collection"]["value"] == "FarAway"


def test_json_before_the_command_is_the_commands(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _write_profiles(tmp_path)
    monkeypatch.chdir(tmp_path)
    assert main(["--json", "config", "show", "--profile=far"]) == 0
    assert json.loads(capsys.readouterr().out)["profile"] == "far"


def test_json_before_a_command_without_it_is_still_an_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--json", "server", "stop"]) == 2
    assert "--json" in capsys.readouterr().err


def test_quiet_after_the_command_silences_it(tmp_path: Path) -> None:
    env = script_environment(STITCHER_HOME=str(tmp_path / "home"))
    loud = run_stitcher("server", "stop", env=env)
    quiet = run_stitcher("server", "stop", "-q", env=env)
    assert loud.returncode == quiet.returncode == 0
    assert "no local server was running" in loud.stderr
    assert quiet.stderr == ""


@pytest.mark.parametrize(
    ("given", "parsed"),
    [
        (["ingest", "docs", "-q"], ["-q", "ingest", "docs"]),
        (["ingest", "--profile", "p", "docs"], ["--profile", "p", "ingest", "docs"]),
        (["search", "--profile=p", "q"], ["--profile=p", "search", "q"]),
        (["server", "status", "--verbose"], ["--verbose", "server", "status"]),
        # after `--` everything is an argument: a file named -q stays a file
        (["ingest", "--", "-q"], ["ingest", "--", "-q"]),
        # an option's value, whatever it looks like, stays the value
        (["search", "--doc", "-q", "x"], ["search", "--doc", "-q", "x"]),
        (
            ["tenants", "-c", "--verbose", "activate", "t"],
            ["tenants", "-c", "--verbose", "activate", "t"],
        ),
        # --json before the command is the command's
        (["--json", "server", "status"], ["server", "status", "--json"]),
        (["--json", "search", "stats"], ["search", "--json", "stats"]),
        (["-q", "ingest", "x"], ["-q", "ingest", "x"]),
    ],
)
def test_reordering(given: list[str], parsed: list[str]) -> None:
    assert reorder_global_options(get_command(app), given) == parsed

"""stitcher.toml profiles and the precedence flags > environment > file > defaults, key by key.

The unit tests call stitcher.config directly; the exit codes and what `config show` prints are
checked through the installed script, as a user meets them.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from stitcher.config import DEFAULTS, ENVIRONMENT, load_settings
from stitcher.errors import ConfigInvalid, ExitStatus
from tests.test_exit_codes import assert_one_error_line, run_stitcher, script_environment

#: A value for each key that differs from the default, per layer (file, environment, flag).
LAYER_VALUES: dict[str, tuple[Any, Any, Any]] = {
    "url": ("http://file.example:8080", "http://env.example:8080", "http://flag.example:8080"),
    "api_key": ("file-key", "env-key", "flag-key"),
    "grpc_port": (50100, 50200, 50300),
    "collection": ("FromFile", "FromEnv", "FromFlag"),
    "tenant": ("kb-file", "kb-env", "kb-flag"),
    "model": ("/models/file", "/models/env", "/models/flag"),
    "alpha": (0.25, 0.75, 1.0),
    "limit": (7, 8, 9),
    "warm": ("never", "always", "auto"),
    "warm_idle": (30.0, 2.5, 60.0),
    "device": ("cpu", "cuda", "auto"),
    "workers": (2, 3, 4),
}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty project folder, and a user config folder of its own (no file yet)."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    for name in ENVIRONMENT.values():
        monkeypatch.delenv(name, raising=False)
    folder = tmp_path / "project"
    folder.mkdir()
    return folder


def write_toml(path: Path, text: str, mode: int = 0o600) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    path.chmod(mode)
    return path


def toml_value(value: Any) -> str:
    return json.dumps(value)  # strings, ints and floats are written alike in TOML and JSON


def test_test_values_cover_every_setting() -> None:
    assert set(LAYER_VALUES) == set(DEFAULTS)


@pytest.mark.parametrize("key", sorted(LAYER_VALUES))
def test_precedence_per_key(key: str, project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """For every key: the default, then the file over it, the variable over the file, the flag
    over the variable, each naming where its value came from."""
    from_file, from_env, from_flag = LAYER_VALUES[key]
    assert load_settings(cwd=project).values[key].source == "default"
    assert load_settings(cwd=project).value(key) == DEFAULTS[key]

    config = write_toml(project / "stitcher.toml", f"{key} = {toml_value(from_file)}\n", mode=0o600)
    found = load_settings(cwd=project).values[key]
    assert (found.value, found.source) == (from_file, str(config.resolve()))

    monkeypatch.setenv(ENVIRONMENT[key], str(from_env))
    found = load_settings(cwd=project).values[key]
    assert (found.value, found.source) == (from_env, f"env {ENVIRONMENT[key]}")

    found = load_settings(flags={key: from_flag}, cwd=project).values[key]
    assert (found.value, found.source) == (from_flag, "flag")


def test_profile_over_top_level_and_project_over_user(project: Path) -> None:
    user = write_toml(
        project.parent / "xdg" / "stitcher" / "stitcher.toml",
        'default_profile = "work"\ncollection = "UserTop"\nlimit = 3\n'
        '[profiles.work]\nurl = "http://user-work:8080"\n'
        '[profiles.home]\nurl = "http://user-home:8080"\n',
    )
    sub = project / "deep" / "er"
    sub.mkdir(parents=True)
    local = write_toml(project / "stitcher.toml", '[profiles.work]\ncollection = "ProjectWork"\n')

    settings = load_settings(cwd=sub)  # found by walking up from a subfolder
    assert settings.files == (user.resolve(), local.resolve())
    assert settings.profile == "work"  # the user's default_profile
    assert settings.values["url"].value == "http://user-work:8080"
    assert settings.values["collection"].value == "ProjectWork"
    assert settings.values["collection"].source == f"{local.resolve()} [profiles.work]"
    assert settings.values["limit"].source == str(user.resolve())  # top level, every profile

    home = load_settings("home", cwd=sub)
    assert home.values["url"].value == "http://user-home:8080"
    assert home.values["collection"].value == "UserTop"


def test_profile_from_environment(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_toml(project / "stitcher.toml", "[profiles.a]\nlimit = 2\n[profiles.b]\nlimit = 4\n")
    monkeypatch.setenv("STITCHER_PROFILE", "b")
    assert load_settings(cwd=project).value("limit") == 4
    assert load_settings("a", cwd=project).value("limit") == 2  # --profile over the variable


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("limit = \n", "is not valid TOML"),
        ("colection = 'x'\n", "unknown key 'colection'"),
        ("[profiles.a]\nurll = 'x'\n", "[profiles.a]: unknown key 'urll'"),
        ("limit = 'ten'\n", "limit must be a int, not str"),
        ("alpha = 2\n", "alpha must lie between 0 and 1"),
        ("limit = 0\n", "limit must be at least 1"),
        ("profiles = 3\n", "profiles must be tables"),
        ("default_profile = 'missing'\n", "unknown profile 'missing'"),
    ],
)
def test_malformed_files_are_refused(project: Path, text: str, expected: str) -> None:
    write_toml(project / "stitcher.toml", text)
    with pytest.raises(ConfigInvalid, match=_literal(expected)):
        load_settings(cwd=project)


def _literal(text: str) -> str:
    import re

    return re.escape(text)


def test_key_in_a_readable_file_is_refused(project: Path) -> None:
    config = write_toml(project / "stitcher.toml", 'api_key = "secret"\n', mode=0o644)
    with pytest.raises(ConfigInvalid, match="chmod 600") as caught:
        load_settings(cwd=project)
    assert "secret" not in str(caught.value)
    config.chmod(0o600)
    assert load_settings(cwd=project).value("api_key") == "secret"


def test_key_file(project: Path) -> None:
    key_file = write_toml(project / "key", "from-key-file\n", mode=0o644)
    write_toml(project / "stitcher.toml", f'api_key_file = "{key_file}"\n', mode=0o644)
    with pytest.raises(ConfigInvalid, match="chmod 600"):
        load_settings(cwd=project)
    # Not read at all when the key comes from a flag: its mode cannot stop that run.
    assert load_settings(flags={"api_key": "f"}, cwd=project).value("api_key") == "f"
    key_file.chmod(0o600)
    found = load_settings(cwd=project).values["api_key"]
    assert found.value == "from-key-file"
    assert str(key_file) in found.source


def test_bad_environment_value_is_refused(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WEAVIATE_GRPC_PORT", "fifty")
    with pytest.raises(ConfigInvalid, match="WEAVIATE_GRPC_PORT='fifty' is not a int"):
        load_settings(cwd=project)


# --- through the installed script ------------------------------------------------------------


def cli_env(project: Path, **changes: str) -> dict[str, str]:
    env = script_environment(XDG_CONFIG_HOME=str(project.parent / "xdg"), **changes)
    for name in [*ENVIRONMENT.values(), "STITCHER_PROFILE", "STITCHER_CONFIG"]:
        if name not in changes:
            env.pop(name, None)
    return env


def run_in(project: Path, *args: str, **env: str) -> Any:
    old = Path.cwd()
    os.chdir(project)
    try:
        return run_stitcher(*args, env=cli_env(project, **env))
    finally:
        os.chdir(old)


def test_config_show_names_sources_and_masks_the_key(project: Path) -> None:
    write_toml(
        project / "stitcher.toml",
        'default_profile = "prod"\n[profiles.prod]\nurl = "http://prod:8080"\n'
        'api_key = "very-secret-key"\nlimit = 11\n',
    )
    done = run_in(project, "config", "show", "--json", STITCHER_ALPHA="0.3")
    assert done.returncode == 0, done.stderr
    assert "very-secret-key" not in done.stdout + done.stderr
    shown = json.loads(done.stdout)
    settings = shown["settings"]
    assert shown["profile"] == "prod"
    assert settings["api_key"] == {
        "value": "***",
        "source": f"{(project / 'stitcher.toml').resolve()} [profiles.prod]",
    }
    assert settings["alpha"] == {"value": 0.3, "source": "env STITCHER_ALPHA"}
    assert settings["limit"]["value"] == 11
    assert settings["collection"] == {"value": "Stitcher", "source": "default"}

    text = run_in(project, "config", "show")
    assert text.returncode == 0
    assert "very-secret-key" not in text.stdout
    assert any(line.split()[:2] == ["limit", "11"] for line in text.stdout.splitlines())


@pytest.mark.parametrize(
    ("text", "args", "expected"),
    [
        ("limit = [\n", ("config", "show"), "is not valid TOML"),
        ("colour = 'red'\n", ("stats",), "unknown key 'colour'"),
        ("[profiles.a]\nlimit = 2\n", ("--profile", "b", "stats"), "unknown profile 'b'"),
        ('api_key = "k"\n', ("config", "show"), "chmod 600"),
    ],
)
def test_bad_configuration_is_a_usage_error(
    project: Path, text: str, args: tuple[str, ...], expected: str
) -> None:
    """Exit 2 with one clear line, before anything connects to a server."""
    write_toml(project / "stitcher.toml", text, mode=0o644)
    done = run_in(project, *args)
    assert done.returncode == ExitStatus.USAGE, done.stderr
    assert expected in assert_one_error_line(done.stderr)


def test_profile_connects_with_its_key_file_and_collection(
    project: Path, weaviate_server: Any
) -> None:
    """url, grpc_port, key file and collection of a profile reach the command; a flag wins."""
    key_file = write_toml(project / "server.key", weaviate_server.api_key() + "\n")
    write_toml(
        project / "stitcher.toml",
        f'[profiles.lab]\nurl = "{weaviate_server.url}"\ngrpc_port = {weaviate_server.grpc_port}\n'
        f'api_key_file = "{key_file}"\ncollection = "ProfileOnlyCollection"\n',
    )
    # STITCHER_HOME points nowhere: only the profile can lead to the session's server.
    done = run_in(project, "--profile", "lab", "stats", STITCHER_HOME=str(project / "no-home"))
    assert done.returncode == ExitStatus.FAILED, done.stderr
    assert "'ProfileOnlyCollection' does not exist" in assert_one_error_line(done.stderr)

    flag = run_in(
        project, "--profile", "lab", "stats", "-c", "FlagCollection",
        STITCHER_HOME=str(project / "no-home"),
    )  # fmt: skip
    assert "'FlagCollection' does not exist" in assert_one_error_line(flag.stderr)

    env = run_in(
        project, "--profile", "lab", "stats", STITCHER_HOME=str(project / "no-home"),
        WEAVIATE_API_KEY="wrong-key",
    )  # fmt: skip
    assert env.returncode == ExitStatus.FAILED
    assert "refused the API key" in assert_one_error_line(env.stderr)


def test_file_and_environment_values_become_option_defaults() -> None:
    """collection, model, alpha and limit reach every command that has such an option (a flag
    still wins: they only replace the default); import keeps the file's own collection name."""
    from typer.main import get_command

    from stitcher.cli import app
    from stitcher.cli.config import defaults_for

    values = {"collection": "Notes", "alpha": 0.25, "limit": 9, "model": "/models/x"}
    defaults: dict[str, Any] = defaults_for(get_command(app), values)
    assert defaults["search"] == values
    assert defaults["ingest"] == {"collection": "Notes", "model": "/models/x"}
    assert defaults["export"] == {"collection": "Notes"}
    assert "import" not in defaults
    assert defaults["server"] == {}  # backup/restore name their collections explicitly


def test_a_limit_from_the_environment_is_the_shown_default(project: Path) -> None:
    done = run_in(project, "search", "--help", STITCHER_LIMIT="9", COLUMNS="200")
    assert done.returncode == 0, done.stderr
    limit_line = next(line for line in done.stdout.splitlines() if "--limit" in line)
    assert "[default: 9]" in limit_line


#: Arguments that take each command that talks to Weaviate as far as connecting.
_CONNECTING_ARGS: dict[tuple[str, ...], tuple[str, ...]] = {
    ("ingest",): ("{docs}",),
    ("search",): ("pigeons", "--no-warm"),
    ("fields",): (),
    ("stats",): (),
    ("adopt",): (),
    ("drop",): ("--yes",),
    ("export",): ("{project}/out.jsonl",),
    ("doctor",): (),
    ("entities", "load"): ("{news}/organizations.jsonl",),
    ("entities", "show"): ("Acme",),
    ("entities", "list"): (),
    ("tenants",): (),
    ("tenants", "deactivate"): ("kb1",),
    ("tenants", "activate"): ("kb1",),
}
#: import checks its whole file before it connects (test_transfer), so no file here reaches it.
_NOT_CONNECTING = {("import",)}


def test_every_connecting_command_is_checked() -> None:
    from typer.main import get_command

    from stitcher.cli import app
    from tests.test_cli import _commands

    with_url = set()
    for path in _commands(app):
        command = get_command(app)
        for name in path:
            command = command.commands[name]  # type: ignore[attr-defined]
        if any(param.name == "url" for param in command.params):
            with_url.add(path)
    assert with_url == set(_CONNECTING_ARGS) | _NOT_CONNECTING


@pytest.mark.parametrize("path", list(_CONNECTING_ARGS), ids=" ".join)
def test_every_command_connects_where_the_profile_says(
    project: Path, path: tuple[str, ...]
) -> None:
    """`stitcher --profile NAME CMD`: the profile's url reaches every command (entities
    commands once took the profile's collection and the local server)."""
    write_toml(project / "stitcher.toml", '[profiles.far]\nurl = "http://127.0.0.1:9"\n')
    docs = project / "docs"
    docs.mkdir()
    (docs / "a.txt").write_text("Pigeons find north with a magnetic compass.", encoding="utf-8")
    news = Path(__file__).resolve().parent.parent / "datasets" / "news"
    fill = {"docs": str(docs), "project": str(project), "news": str(news)}
    args = [arg.format(**fill) for arg in _CONNECTING_ARGS[path]]
    # STITCHER_HOME points nowhere: a command that ignored the profile would start a server.
    home = str(project / "home")
    try:
        done = run_in(project, "--profile", "far", *path, *args, STITCHER_HOME=home)
    finally:  # a command that ignored the profile started a local server there: stop it
        if (project / "home" / "data").exists():
            run_in(project, "server", "stop", STITCHER_HOME=home)
    assert done.returncode == ExitStatus.FAILED, done.stderr
    assert "127.0.0.1:9" in done.stderr + done.stdout, done.stderr  # doctor: a report on stdout
    assert not (project / "home" / "data").exists()

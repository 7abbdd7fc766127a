"""The `stitcher` command tree: the root command with the global options, and every command and
group under it, in the order `stitcher --help` lists them."""

from __future__ import annotations

import inspect
from functools import cache
from typing import Annotated

import typer

from stitcher.cli.collection import adopt, drop, fields, stats, tenants_app
from stitcher.cli.config import config_app, defaults_for
from stitcher.cli.doctor import doctor, model_app
from stitcher.cli.entities import entities_app
from stitcher.cli.help import HELP_OPTION_NAMES, StitcherGroup, setting_flags
from stitcher.cli.ingest import ingest
from stitcher.cli.invocation import INVOCATION
from stitcher.cli.process import quiet_third_parties
from stitcher.cli.search import search
from stitcher.cli.server import server_app
from stitcher.cli.transfer import export_command, import_command
from stitcher.config import load_settings
from stitcher.errors import ExitStatus

app = typer.Typer(
    help="Load documents into Weaviate and search them so every hit comes back as whole sentences.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    cls=StitcherGroup,
    context_settings={"help_option_names": HELP_OPTION_NAMES},
)
app.command()(ingest)
app.command()(search)
app.command()(fields)
app.command()(stats)
app.command()(adopt)
app.command()(drop)
app.command("export")(export_command)
app.command("import")(import_command)
app.command()(doctor)
app.add_typer(server_app, name="server")
app.add_typer(entities_app, name="entities")
app.add_typer(model_app, name="model")
app.add_typer(config_app, name="config")
app.add_typer(tenants_app, name="tenants")


def _version_callback(value: bool) -> None:
    if not value:
        return
    for name, number in versions().items():
        typer.echo(f"{name} {number}")
    raise typer.Exit(ExitStatus.OK)


def versions() -> dict[str, str]:
    """stitcher's, the Weaviate client's and the local server's versions (no heavy imports)."""
    # importlib.metadata brings email and zipfile along (~20 ms) that `stitcher --help` needs not
    from importlib.metadata import PackageNotFoundError, version

    from stitcher import server

    found: dict[str, str] = {}
    for name in ("stitcher", "weaviate-client"):
        try:
            found[name] = version(name)
        except PackageNotFoundError:
            found[name] = "not installed"
    state = server.status()
    if state.state == "running" and state.info is not None:
        found["weaviate-server"] = f"{state.version} (local, {state.info.url})"
    else:
        found["weaviate-server"] = f"not running (local server {state.state})"
    return found


@app.callback()
def _root(
    ctx: typer.Context,
    profile: Annotated[
        str | None,
        typer.Option(
            "--profile",
            help="Profile of stitcher.toml to use (env: STITCHER_PROFILE). Default: the file's "
            "default_profile.",
        ),
    ] = None,
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            "-V",
            callback=_version_callback,
            is_eager=True,
            help="Print the versions of stitcher, weaviate-client and the local server.",
        ),
    ] = False,
    quiet: Annotated[
        bool,
        typer.Option("--quiet", "-q", help="No notices or progress on stderr; errors still show."),
    ] = False,
    verbose: Annotated[
        bool,
        typer.Option("--verbose", help="Also show other packages' warnings (pypdf, torch, ...)."),
    ] = False,
) -> None:
    """Load documents into Weaviate and search them so every hit comes back as whole sentences."""
    INVOCATION.command = ctx.command
    INVOCATION.quiet = quiet
    INVOCATION.verbose = verbose
    quiet_third_parties(verbose)
    INVOCATION.profile = profile
    settings = load_settings(profile)  # a broken file fails every command the same way (exit 2)
    # click's default_map: values here replace an option's default, but not a flag given.
    ctx.default_map = defaults_for(ctx.command, settings.overridden())


@cache
def flags_of_settings() -> dict[str, str]:
    """The long flag of each setting the library names, over every command of the app."""
    return setting_flags(typer.main.get_command(app))


def _one_line_summaries(*groups: typer.Typer) -> None:
    """Each command's summary in a command list: its docstring's first paragraph on one line.

    typer's command lists keep the docstring's own line breaks in rich mode (its check of the
    markup mode is the wrong way round), so a two-line summary showed as a cut-off sentence.
    """
    for group in groups:
        for info in group.registered_commands:
            text = info.help or inspect.getdoc(info.callback) or ""
            info.short_help = info.short_help or " ".join(text.split("\n\n")[0].split())


_one_line_summaries(app, server_app, model_app, config_app, entities_app, tenants_app)

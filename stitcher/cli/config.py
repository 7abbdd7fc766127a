"""`stitcher config show`, and how stitcher.toml and the environment become option defaults."""

from __future__ import annotations

import typer

from stitcher.cli.invocation import INVOCATION
from stitcher.cli.options import JsonOpt
from stitcher.cli.output import print_json
from stitcher.config import load_settings

#: Command options whose defaults come from the environment and stitcher.toml (flags still win).
CONFIGURABLE_OPTIONS = ("collection", "tenant", "model", "alpha", "limit", "device", "workers")

config_app = typer.Typer(help="Configuration: stitcher.toml profiles and where values come from.")


def defaults_for(command: object, values: dict[str, object]) -> dict[str, object]:
    """click default_map for `command` and its subcommands: the configurable options they have."""
    defaults: dict[str, object] = {}
    for name, sub in (getattr(command, "commands", None) or {}).items():
        if getattr(sub, "commands", None):
            defaults[name] = defaults_for(sub, values)
            continue
        params = {getattr(p, "name", None) for p in getattr(sub, "params", ())}
        wanted = {key: values[key] for key in CONFIGURABLE_OPTIONS if key in params & values.keys()}
        if wanted:
            defaults[name] = wanted
    return defaults


@config_app.command("show")
def config_show(as_json: JsonOpt = False) -> None:
    """The effective settings and where each comes from (flag, environment, file, default)."""
    data = load_settings(INVOCATION.profile).to_json()
    if as_json:
        print_json(data, indent=2)
        return
    # Plain aligned lines: greppable, and a value is never taken for rich markup.
    known = ", ".join(data["profiles"]) or "none"
    typer.echo(f"profile     {data['profile'] or '(none)'}   (profiles: {known})")
    for path in data["files"] or ["(no stitcher.toml found)"]:
        typer.echo(f"file        {path}")
    for key, item in data["settings"].items():
        value = "(local server)" if key == "url" and item["value"] is None else item["value"]
        shown = "-" if value is None else value
        typer.echo(f"{key:<11} {shown!s:<40} {item['source']}")

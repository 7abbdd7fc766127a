"""`stitcher entities load|show|list`: the organizations and people documents mention.

Registered by stitcher.cli.root as `app.add_typer(entities_app, name="entities")`. Errors are
raised as StitcherError and turned into messages and exit codes by stitcher.cli.boundary (an
ambiguous or unknown name exits 2).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from stitcher.cli.library import open_stitcher
from stitcher.cli.options import (
    JsonOpt,
    ServerFlags,
    WaitOpt,
    collection_option,
    connecting,
    tenant_option,
    value,
)
from stitcher.cli.output import print_json
from stitcher.config import DEFAULT_COLLECTION
from stitcher.errors import CollectionMissing
from stitcher.graph.model import KINDS, name_key, read_entities

# The commands open the library through stitcher.cli.library (this run's profile, its notices
# on stderr, quiet under -q): the library core is not loaded for `stitcher --help`.

entities_app = typer.Typer(
    help="Organizations and people that documents mention, and their links.\n\n"
    'Filters follow them: --where mentions.country=France, mentions.board_member.name="Rod".',
    no_args_is_help=True,
)

_CollectionOpt = Annotated[
    str,
    collection_option("Collection whose documents mention them."),
]
_TenantOpt = Annotated[
    str | None,
    tenant_option("Only this tenant's chunks (env: STITCHER_TENANT)."),
]
_KindOpt = Annotated[
    str | None,
    value("KIND", "organization or person. Default: from the rows.", None, "--kind"),
]


@entities_app.command("load")
@connecting
def load(
    files: Annotated[
        list[Path],
        typer.Argument(metavar="FILE...", help="JSON Lines or CSV files of entities."),
    ],
    kind: _KindOpt = None,
    collection: _CollectionOpt = DEFAULT_COLLECTION,
    tenant: _TenantOpt = None,
    wait: WaitOpt = False,
    as_json: JsonOpt = False,
    *,
    server: ServerFlags,
) -> None:
    """Create or update entities and their links (idempotent), then re-link stored mentions
    (of --tenant only, or of every active tenant)."""
    entities = [entity for path in files for entity in read_entities(path, kind)]
    with open_stitcher(server, collection, tenant=tenant) as s:
        report = s.load_entities(entities, wait=wait)
    if as_json:
        print_json(report.to_json())
    else:
        lines = report.lines()
        typer.echo(lines[0])
        for line in lines[1:]:
            typer.echo(line, err=True)


@entities_app.command("show")
@connecting
def show(
    name: Annotated[str, typer.Argument(metavar="NAME", help="Name, alias or part of one.")],
    kind: _KindOpt = None,
    collection: _CollectionOpt = DEFAULT_COLLECTION,
    tenant: _TenantOpt = None,
    as_json: JsonOpt = False,
    *,
    server: ServerFlags,
) -> None:
    """Print one entity, its links in both directions and the documents that mention it (in
    --tenant, or in each active tenant)."""
    with open_stitcher(server, collection, tenant=tenant) as s:
        if tenant is not None and not s.store.exists():
            raise CollectionMissing(s.missing_message())
        view = s.store.entities().show(name, kind)
    data = view.to_json()
    if as_json:
        print_json(data)
        return
    typer.echo(f"{data['kind']} {data['name']} [{data['id']}]")
    if data["aliases"]:
        typer.echo(f"  aliases: {', '.join(data['aliases'])}")
    for attribute in ("city", "country", "industry"):
        if data.get(attribute):
            typer.echo(f"  {attribute}: {data[attribute]}")
    for link, targets in data["links"].items():
        typer.echo(f"  {link}: {', '.join(t['name'] for t in targets)}")
    if view.mentioned_in is not None:
        typer.echo(f"  mentioned in {len(view.mentioned_in)} document(s)")
        for doc_id in view.mentioned_in:
            typer.echo(f"    {doc_id}")
    for tenant_name, doc_ids in (view.mentioned_by_tenant or {}).items():
        typer.echo(f"  mentioned in {len(doc_ids)} document(s) of tenant {tenant_name}")
        for doc_id in doc_ids:
            typer.echo(f"    {doc_id}")


@entities_app.command("list")
@connecting
def list_entities(
    kind: _KindOpt = None,
    collection: _CollectionOpt = DEFAULT_COLLECTION,
    as_json: JsonOpt = False,
    *,
    server: ServerFlags,
) -> None:
    """List the loaded entities: kind, id, name, aliases and place."""
    with open_stitcher(server, collection) as s:
        found = s.store.entities().entities([kind] if kind else list(KINDS))
    found.sort(key=lambda e: (e.kind, name_key(e.name), e.id))
    if as_json:
        rows = [
            {"kind": e.kind, "id": e.id, "name": e.name, "aliases": list(e.aliases),
             **dict(e.attributes)}
            for e in found
        ]  # fmt: skip
        print_json(rows)
        return
    for e in found:
        typer.echo(f"{e.kind}\t{e.id}\t{e.label()}")

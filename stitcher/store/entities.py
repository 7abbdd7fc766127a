"""The entity side of a store that is the same whatever the backend: what loading and
re-linking report, one entity as `stitcher entities show` prints it, and finding the entity a
name means among loaded ones. The Weaviate collections: stitcher.store.weaviate.entities."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from stitcher.errors import setting
from stitcher.graph.model import KINDS, DanglingLink, Entity, build_graph, name_key
from stitcher.graph.resolve import AmbiguousEntity, Resolver, UnknownEntity
from stitcher.store.schema import some_names


@dataclass
class RelinkReport:
    """What re-resolving the mentions of stored chunks changed."""

    chunks_checked: int = 0
    chunks_changed: int = 0
    #: Names that resolved to no organization, by tenant (None: a single-tenant collection)
    #: and document.
    unresolved: dict[str | None, dict[str, list[str]]] = field(default_factory=dict)
    #: Tenants whose chunks were re-linked (None: the collection is single-tenant).
    tenants: list[str] | None = None
    #: Inactive tenants left as they are: reading one would load it into the server's memory.
    inactive_tenants: list[str] = field(default_factory=list)

    def unresolved_json(self) -> dict[str, Any]:
        """By document for one collection or tenant, by tenant then document for several."""
        if self.tenants is None or len(self.tenants) == 1:
            return next(iter(self.unresolved.values()), {})
        return {tenant: docs for tenant, docs in self.unresolved.items() if tenant is not None}


@dataclass
class LoadReport:
    """What `stitcher entities load` did."""

    collection: str
    read: int = 0
    created: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: int = 0
    dangling: list[DanglingLink] = field(default_factory=list)
    ambiguous: dict[str, list[str]] = field(default_factory=dict)
    relink: RelinkReport | None = None

    def to_json(self) -> dict[str, Any]:
        """The `--json` object."""
        out: dict[str, Any] = {
            "collection": self.collection,
            "read": self.read,
            "created": self.created,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "dangling_links": [
                {"kind": d.kind, "id": d.id, "link": d.link, "target": d.target}
                for d in self.dangling
            ],
            "ambiguous_names": self.ambiguous,
        }
        if self.relink is not None:
            out["chunks_relinked"] = self.relink.chunks_changed
            out["unresolved_mentions"] = self.relink.unresolved_json()
            if self.relink.tenants is not None:
                out["tenants_relinked"] = self.relink.tenants
                out["tenants_inactive"] = self.relink.inactive_tenants
        return out

    def lines(self) -> list[str]:
        """Human-readable summary, one fact per line."""
        out = [
            f"{self.collection}: {self.read} entities read, {len(self.created)} created, "
            f"{len(self.updated)} updated, {self.unchanged} unchanged"
        ]
        for d in self.dangling:
            out.append(
                f"warning: {d.kind} {d.id!r} {d.link} {d.target!r}, which is not loaded "
                "(kept; linked once it is)"
            )
        for key, owners in sorted(self.ambiguous.items()):
            out.append(
                f"warning: the name {key!r} belongs to {', '.join(owners)}; mentions of it "
                "resolve to none of them"
            )
        if self.relink is not None:
            tenants = self.relink.tenants
            of_tenants = "" if tenants is None else f" of {len(tenants)} tenant(s)"
            out.append(
                f"mentions re-linked on {self.relink.chunks_changed} of "
                f"{self.relink.chunks_checked} chunks{of_tenants}"
            )
            for tenant, docs in sorted(self.relink.unresolved.items(), key=lambda i: i[0] or ""):
                where = "" if tenant is None else f"tenant {tenant}: "
                for doc_id, names in sorted(docs.items()):
                    out.append(f"unresolved mentions in {where}{doc_id}: {', '.join(names)}")
            if self.relink.inactive_tenants:
                out.append(
                    f"warning: {len(self.relink.inactive_tenants)} inactive tenant(s) not "
                    f"re-linked ({some_names(self.relink.inactive_tenants)}): reading them "
                    "would load them; `stitcher entities load FILES --tenant NAME` re-links one"
                )
        return out


@dataclass(frozen=True)
class EntityView:
    """One entity with the entities it links to (both directions) and where it is mentioned."""

    entity: Entity
    links: dict[str, list[Entity]]
    mentioned_in: list[str] | None = None
    #: For a multi-tenant collection read without a tenant: the documents of each active tenant.
    mentioned_by_tenant: dict[str, list[str]] | None = None

    def to_json(self) -> dict[str, Any]:
        """The `--json` object."""
        e = self.entity
        out: dict[str, Any] = {
            "kind": e.kind,
            "id": e.id,
            "name": e.name,
            "aliases": list(e.aliases),
            **dict(e.attributes),
            "links": {
                name: [{"kind": t.kind, "id": t.id, "name": t.name} for t in targets]
                for name, targets in self.links.items()
                if targets
            },
        }
        if e.extra:
            out["extra"] = dict(e.extra)
        if self.mentioned_in is not None:
            out["mentioned_in"] = self.mentioned_in
        if self.mentioned_by_tenant is not None:
            out["mentioned_by_tenant"] = self.mentioned_by_tenant
        return out


def find_entity(entities: Sequence[Entity], name: str, where: str) -> Entity:
    """The one entity among `entities` that `name` means (forgiving: aliases, parts, small
    typos); `where` names the collection in messages.

    Raises:
        AmbiguousEntity: Several fit (the message lists them).
        UnknownEntity: None fits.
    """
    exact = [e for e in entities if name_key(name) in e.keys]
    found = exact or [e for each in KINDS for e in Resolver(entities, each).candidates(name)]
    if len(found) == 1:
        return found[0]
    if not found:
        hint = "check the spelling" if entities else "load some with `stitcher entities load`"
        raise UnknownEntity(f"no entity named {name!r} in {where}; {hint}")
    raise AmbiguousEntity(
        f"{name!r} is ambiguous in {where}: it may mean "
        + "; ".join(f"{e.kind} {e.label()}" for e in found[:10])
        + (f" and {len(found) - 10} more" if len(found) > 10 else "")
        + f". Give the full name (or {setting('kind')}).",
        [e.name for e in found],
    )


def entity_links(entities: Sequence[Entity], entity: Entity) -> dict[str, list[Entity]]:
    """The entities `entity` links to and is linked from, by link name."""
    graph = build_graph(entities)
    return {
        ref: [graph.entities[target] for target in targets]
        for ref, targets in graph.references[(entity.kind, entity.id)].items()
    }

"""Dotted `--where` fields that follow references: `mentions.country`, `mentions.board_member.name`.

A path starts at the chunk's `mentions` (the organizations its document mentions), follows zero
or more links (board_member, supplier_of, supplier, invested_in, investor; see
stitcher.graph.model.LINKS) and ends on a field of the entity it reached: `id`, `name` (matches
the name and every alias), or an attribute such as `city`, `country`, `industry`. A path that
ends on a link means that link's `name`: `mentions.supplier_of=Hyundai`.

Weaviate runs these as reference filters (`Filter.by_ref(...).by_ref(...)`, built by
stitcher.store.weaviate.filters.path_filter) inside the query, before ranking; the memory store
runs the same `path_test` over its entities at query time. Values of names and attributes are
compared by `name_key` (case, accents and spacing do not matter); ids exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

from stitcher.errors import FilterError
from stitcher.filters import Condition
from stitcher.graph.model import KINDS, MENTIONED_KIND, Entity, name_key, references_of

#: The first segment of every path, and the reference property chunks hold.
MENTIONS = "mentions"
MENTIONS_REF = "mentions_ref"

#: Links a path may follow after `mentions` (each one is a further lookup inside Weaviate).
MAX_LINKS = 3

#: Entity properties (stitcher.store.weaviate.entity_objects): the stored id and the name keys.
ID_PROPERTY = "entity_id"
NAME_KEYS_PROPERTY = "name_keys"


def attribute_key_property(attribute: str) -> str:
    """The property holding the name key of an attribute (country → country_key)."""
    return f"{attribute}_key"


@dataclass(frozen=True)
class RefPath:
    """A parsed path: the references to follow after `mentions`, and the field at the end."""

    links: tuple[str, ...]
    kind: str
    field: str

    @property
    def text(self) -> str:
        """The path as written in --where."""
        return ".".join((MENTIONS, *self.links, self.field))


def fields_of(kind: str) -> tuple[str, ...]:
    """Fields a path may end on for entities of `kind`."""
    return ("id", "name", *KINDS[kind].attributes)


def is_path(field: str) -> bool:
    """Whether a --where field is a reference path rather than a property of the chunk."""
    return "." in field


def parse_path(field: str) -> RefPath:
    """`mentions.board_member.name` → RefPath(("board_member",), "person", "name").

    Raises:
        FilterError: The path does not start with `mentions`, names an unknown link or field
            (the message lists the valid ones at that point), or follows too many links.
    """
    segments = field.split(".")
    if segments[0] != MENTIONS or len(segments) < 2 or not all(segments):
        raise FilterError(
            f"unknown field {field!r} in filter: dotted fields follow the `{MENTIONS}` "
            f"references of chunks, e.g. {MENTIONS}.country=France or "
            f'{MENTIONS}.board_member.name="Rod Johnson"'
        )
    kind = MENTIONED_KIND
    links: list[str] = []
    for position, segment in enumerate(segments[1:], start=1):
        last = position == len(segments) - 1
        references = references_of(kind)
        if segment in references:
            links.append(segment)
            kind = references[segment]
            if len(links) > MAX_LINKS:
                raise FilterError(
                    f"filter {field!r} follows {len(links)} links; at most {MAX_LINKS} are "
                    "allowed after mentions (each one is another lookup inside Weaviate)"
                )
            if last:
                return RefPath(tuple(links), kind, "name")
            continue
        if last and segment in fields_of(kind):
            return RefPath(tuple(links), kind, segment)
        prefix = ".".join(segments[:position])
        raise FilterError(
            f"unknown {'field' if last else 'link'} {segment!r} after {prefix!r} in filter "
            f"{field!r}: {_an(kind)} has fields {', '.join(fields_of(kind))} and links "
            + ", ".join(f"{name} (to {_an(target)})" for name, target in references.items())
        )
    raise AssertionError("unreachable: the loop returns or raises")


def _an(kind: str) -> str:
    return f"{'an' if kind[:1] in 'aeiou' else 'a'} {kind}"


def valid_paths() -> list[str]:
    """Paths of up to one link, for help texts and error messages."""
    found = [f"{MENTIONS}.{name}" for name in fields_of(MENTIONED_KIND)]
    for link, target in references_of(MENTIONED_KIND).items():
        found.extend(f"{MENTIONS}.{link}.{name}" for name in fields_of(target))
    return found


@dataclass(frozen=True)
class PathTest:
    """A condition on a path, checked and with its values in the form they are compared in
    (name keys, or ids as written): what every store runs along the references.

    `op` is "eq", "any", "contains" or "ne"; `values` holds one value except for "any". A chunk
    matches when some entity the path reaches from its mentions has a matching value (for "ne":
    some reached entity has another value, Weaviate's meaning, not "none has it").
    """

    path: RefPath
    op: str
    values: tuple[str, ...]


def path_test(condition: Condition) -> PathTest:
    """Parse and check a condition on a path (`mentions.country=France`).

    Raises:
        FilterError: Unknown path, an operator that makes no sense on it, or an empty list.
    """
    path = parse_path(condition.field)

    def convert(value: object) -> str:
        return str(value) if path.field == "id" else name_key(str(value))

    op = condition.op
    if op in ("eq", "contains") or (op == "ne" and path.field != "name"):
        return PathTest(path, op, (convert(condition.value),))
    if op == "any":
        raw = condition.value
        values = list(raw) if isinstance(raw, (list, tuple, set, frozenset)) else [raw]
        if not values:
            raise FilterError(f"filter on {condition.field!r}: 'any' needs at least one value")
        return PathTest(path, op, tuple(convert(v) for v in values))
    allowed = "=, ~ and a,b lists" if path.field == "name" else "=, !=, ~ and a,b lists"
    raise FilterError(f"filter {condition.field!r}: only {allowed} work along references")


def entity_values(entity: Entity, field: str) -> tuple[str, ...]:
    """What a path ending on `field` compares for `entity`: its id, the name keys of its name
    and aliases, or the name key of an attribute (none when the entity lacks it)."""
    if field == "id":
        return (entity.id,)
    if field == "name":
        return entity.keys
    value = entity.attributes.get(field)
    return (name_key(value),) if value else ()


def no_links_message(field: str, collection: str) -> str:
    """Why a path filter cannot run on a collection whose chunks link to no entities yet."""
    return (
        f"filter {field!r}: collection {collection or '(this one)'!r} has no links to entities "
        "yet; run `stitcher entities load FILE` for it, then ingest documents whose front "
        "matter lists `mentions`"
    )

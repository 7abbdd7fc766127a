"""Entities and their links, as plain data: kinds, link types, name keys, files, ids, the graph.

Nothing here talks to Weaviate; `stitcher.store.weaviate.entities` writes what these compute.

Two kinds of entity exist: organizations (name, aliases, city, country, industry) and people
(name, aliases). A link is declared on one side (a person's `board_member_of`, an organization's
`supplier_of` and `invested_in`) and stored in both directions, because Weaviate follows a
reference only from the object that holds it: filtering chunks on `mentions.board_member.name`
needs organization → person, while the data says person → organization.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
import unicodedata
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stitcher.errors import LoadError, setting
from stitcher.ids import canonical_collection_name

#: Namespace of every entity id. Changing it changes every entity object's id and breaks the
#: references chunks hold: never do it within a layout version.
ENTITY_NAMESPACE = uuid.UUID("3b0d6c52-8f1e-5a47-b6d2-91c4e0a7f215")


@dataclass(frozen=True)
class KindSpec:
    """One kind of entity: its collection suffix and the text attributes it carries."""

    kind: str
    suffix: str
    attributes: tuple[str, ...]


@dataclass(frozen=True)
class LinkSpec:
    """A link declared as `name` on `source` entities, pointing at `target` entities.

    `inverse` is the reference stored on the target pointing back, so filters can follow the
    link from either end.
    """

    name: str
    source: str
    target: str
    inverse: str


KINDS: dict[str, KindSpec] = {
    "organization": KindSpec("organization", "Organization", ("city", "country", "industry")),
    "person": KindSpec("person", "Person", ()),
}

LINKS: tuple[LinkSpec, ...] = (
    LinkSpec("board_member_of", "person", "organization", "board_member"),
    LinkSpec("supplier_of", "organization", "organization", "supplier"),
    LinkSpec("invested_in", "organization", "organization", "investor"),
)

#: The kind that documents mention (the chunk collection's `mentions` references point at it).
MENTIONED_KIND = "organization"

#: File stems that say which kind a file holds when its rows do not.
_KIND_BY_STEM = {
    "organization": "organization",
    "organizations": "organization",
    "organisation": "organization",
    "organisations": "organization",
    "org": "organization",
    "orgs": "organization",
    "company": "organization",
    "companies": "organization",
    "person": "person",
    "persons": "person",
    "people": "person",
    "board": "person",
    "board_members": "person",
}

#: Columns with a meaning of their own; any other column is kept in `Entity.extra`.
_RESERVED_COLUMNS = {"id", "kind", "type", "name", "aliases"}

#: Separators between items of a list cell in a CSV file.
_CSV_LIST_SPLIT = re.compile(r"\s*[|;]\s*")


def references_of(kind: str) -> dict[str, str]:
    """Every reference an entity of `kind` holds, by name, with the kind it points at."""
    found: dict[str, str] = {}
    for link in LINKS:
        if link.source == kind:
            found[link.name] = link.target
        if link.target == kind:
            found[link.inverse] = link.source
    return found


def declared_links(kind: str) -> tuple[str, ...]:
    """The link names an input row of `kind` may declare (e.g. person: board_member_of)."""
    return tuple(link.name for link in LINKS if link.source == kind)


def name_key(text: str) -> str:
    """The form names are compared in: case, accents, width and spacing do not matter.

    "Atelier Numérique", "atelier  numerique" and "ＡＴＥＬＩＥＲ Numerique" share a key. Han
    characters and Hangul are kept as they are (NFKD splits Hangul syllables into jamo, and NFC
    joins them again).
    """
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(c for c in decomposed if unicodedata.category(c) != "Mn")
    composed = unicodedata.normalize("NFC", stripped).casefold()
    return " ".join(composed.split())


@dataclass(frozen=True)
class Entity:
    """One organization or person as loaded from a file.

    `links` maps a declared link name (see LINKS) to the ids of its targets; `attributes` holds
    the kind's text attributes (city, country, industry); `extra` every other column.
    """

    kind: str
    id: str
    name: str
    aliases: tuple[str, ...] = ()
    attributes: Mapping[str, str] = field(default_factory=dict)
    links: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def names(self) -> tuple[str, ...]:
        """Name first, then aliases, without repeats."""
        return tuple(dict.fromkeys((self.name, *self.aliases)))

    @property
    def keys(self) -> tuple[str, ...]:
        """The name keys of its name and aliases (what mentions and filters match)."""
        return tuple(dict.fromkeys(name_key(n) for n in self.names if name_key(n)))

    def label(self) -> str:
        """ "Name (alias, alias; city, country)" for candidate lists."""
        details = [", ".join(self.aliases)] if self.aliases else []
        place = ", ".join(v for k in ("city", "country") if (v := self.attributes.get(k)))
        if place:
            details.append(place)
        return f"{self.name} ({'; '.join(details)})" if details else self.name


def entity_uuid(collection: str, kind: str, entity_id: str) -> str:
    """The object id of one entity: uuid5 of (chunk collection, kind, entity id) as JSON.

    Reloading a file therefore rewrites the same objects, and references stored on chunks stay
    valid across reloads.
    """
    key = json.dumps([canonical_collection_name(collection), kind, entity_id])
    return str(uuid.uuid5(ENTITY_NAMESPACE, key))


def entity_collection(collection: str, kind: str) -> str:
    """The collection that holds entities of `kind` for chunk collection `collection`.

    One set of entity collections per chunk collection ("News_Organization", "News_Person"):
    two corpora can then describe different graphs, and dropping one never breaks the other's
    references.
    """
    return f"{canonical_collection_name(collection)}_{KINDS[kind].suffix}"


# --- reading files --------------------------------------------------------------------------


def read_entities(path: Path, kind: str | None = None) -> list[Entity]:
    """Entities from a JSON Lines or CSV file.

    Each row needs `name` (and should have a stable `id`; without one the name key is the id).
    The kind comes from a `kind` (or `type`) column, else from `kind`, else from the file name
    (organizations.jsonl, people.csv, ...). List cells in CSV are separated by `|` or `;` or
    written as a JSON array.

    Raises:
        LoadError: The file cannot be read, a row is malformed, or the kind is unknown; the
            message names the file and line.
    """
    if kind is not None and kind not in KINDS:
        raise LoadError(f"unknown entity kind {kind!r}; use one of {', '.join(KINDS)}")
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise LoadError(f"{path}: cannot read entity file: {error}") from None
    rows = _csv_rows(path, text) if path.suffix.lower() == ".csv" else _json_rows(path, text)
    default_kind = kind or _KIND_BY_STEM.get(path.stem.lower().replace("-", "_"))
    entities: list[Entity] = []
    seen: dict[tuple[str, str], int] = {}
    for line, row in rows:
        entity = _entity_from_row(row, default_kind, f"{path}:{line}")
        previous = seen.get((entity.kind, entity.id))
        if previous is not None:
            raise LoadError(
                f"{path}:{line}: {entity.kind} id {entity.id!r} was already given on line "
                f"{previous}; ids must be unique"
            )
        seen[(entity.kind, entity.id)] = line
        entities.append(entity)
    return entities


def _json_rows(path: Path, text: str) -> list[tuple[int, dict[str, Any]]]:
    rows = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as error:
            raise LoadError(
                f"{path}:{number}: not JSON ({error.msg}); write one JSON object per line"
            ) from None
        if not isinstance(row, dict):
            raise LoadError(f"{path}:{number}: expected a JSON object, got {type(row).__name__}")
        rows.append((number, row))
    return rows


def _csv_rows(path: Path, text: str) -> list[tuple[int, dict[str, Any]]]:
    reader = csv.DictReader(text.splitlines())
    rows = []
    for row in reader:
        cleaned = {k.strip(): v for k, v in row.items() if k is not None and v not in (None, "")}
        rows.append((reader.line_num, cleaned))
    return rows


def _entity_from_row(row: Mapping[str, Any], default_kind: str | None, where: str) -> Entity:
    kind = str(row.get("kind") or row.get("type") or default_kind or "").strip().lower()
    kind = _KIND_BY_STEM.get(kind, kind)
    if kind not in KINDS:
        raise LoadError(
            f"{where}: cannot tell which kind of entity this is; add a `kind` column "
            f"({' or '.join(KINDS)}) or pass {setting('kind')}"
        )
    name = str(row.get("name") or "").strip()
    if not name:
        raise LoadError(f"{where}: the row has no `name`")
    entity_id = str(row.get("id") or "").strip() or name_key(name)
    spec = KINDS[kind]
    declared = declared_links(kind)
    attributes = {a: str(row[a]).strip() for a in spec.attributes if _present(row.get(a))}
    links = {n: tuple(_string_list(row.get(n), where, n)) for n in declared if row.get(n)}
    extra = {
        key: value
        for key, value in row.items()
        if key not in _RESERVED_COLUMNS
        and key not in spec.attributes
        and key not in declared
        and _present(value)
    }
    undeclared = sorted(set(extra) & {link.name for link in LINKS})
    if undeclared:
        raise LoadError(
            f"{where}: a {kind} cannot have {', '.join(undeclared)}; "
            f"{kind} links are: {', '.join(declared) or 'none'}"
        )
    aliases = [a for a in _string_list(row.get("aliases"), where, "aliases") if a != name]
    return Entity(
        kind=kind,
        id=entity_id,
        name=name,
        aliases=tuple(dict.fromkeys(aliases)),
        attributes=attributes,
        links=links,
        extra=extra,
    )


def _present(value: Any) -> bool:
    return value is not None and value != "" and value != []


def _string_list(value: Any, where: str, column: str) -> list[str]:
    if value is None or value == "":
        return []
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("["):
            try:
                value = json.loads(text)
            except json.JSONDecodeError:
                raise LoadError(f"{where}: column {column!r} is not a JSON list") from None
        else:
            return [item for item in _CSV_LIST_SPLIT.split(text) if item]
    if not isinstance(value, list):
        raise LoadError(f"{where}: column {column!r} must be a list of strings")
    return [str(item).strip() for item in value if str(item).strip()]


# --- the graph ------------------------------------------------------------------------------


@dataclass(frozen=True)
class DanglingLink:
    """A link whose target id is not among the loaded entities."""

    kind: str
    id: str
    link: str
    target: str


@dataclass(frozen=True)
class Graph:
    """All entities of one chunk collection with the references each object must hold."""

    entities: dict[tuple[str, str], Entity]
    references: dict[tuple[str, str], dict[str, tuple[tuple[str, str], ...]]]
    dangling: tuple[DanglingLink, ...]


def build_graph(entities: Iterable[Entity]) -> Graph:
    """Forward and inverse references of every entity, sorted so the result is deterministic.

    A link to an id that is not loaded is kept out of the references and listed in `dangling`
    (the raw id stays on the entity, so loading the target later completes it).
    """
    by_key = {(e.kind, e.id): e for e in entities}
    references: dict[tuple[str, str], dict[str, set[tuple[str, str]]]] = {
        key: {name: set() for name in references_of(key[0])} for key in by_key
    }
    dangling: list[DanglingLink] = []
    for key, entity in sorted(by_key.items()):
        for link in LINKS:
            if link.source != entity.kind:
                continue
            for target_id in entity.links.get(link.name, ()):
                target = (link.target, target_id)
                if target not in by_key:
                    dangling.append(DanglingLink(entity.kind, entity.id, link.name, target_id))
                    continue
                references[key][link.name].add(target)
                references[target][link.inverse].add(key)
    return Graph(
        entities=by_key,
        references={
            key: {name: tuple(sorted(targets)) for name, targets in refs.items()}
            for key, refs in references.items()
        },
        dangling=tuple(dangling),
    )


def ambiguous_keys(entities: Iterable[Entity], kind: str) -> dict[str, list[Entity]]:
    """Name keys that several entities of `kind` share (they resolve to none of them)."""
    owners: dict[str, dict[str, Entity]] = {}
    for entity in entities:
        if entity.kind == kind:
            for key in entity.keys:
                owners.setdefault(key, {})[entity.id] = entity
    return {k: list(found.values()) for k, found in owners.items() if len(found) > 1}


def content_hash(entity: Entity, references: Mapping[str, Sequence[tuple[str, str]]]) -> str:
    """Hash of everything stored for an entity: reloading unchanged data writes nothing."""
    payload = {
        "kind": entity.kind,
        "id": entity.id,
        "name": entity.name,
        "aliases": list(entity.aliases),
        "attributes": dict(sorted(entity.attributes.items())),
        "links": {k: list(v) for k, v in sorted(entity.links.items())},
        "extra": {k: entity.extra[k] for k in sorted(entity.extra)},
        "references": {k: [list(t) for t in v] for k, v in sorted(references.items())},
    }
    text = json.dumps(payload, ensure_ascii=False, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# --- mentions given outside the documents ------------------------------------------------------


def read_mentions_file(path: Path) -> dict[str, tuple[str, ...]]:
    """Which names each document mentions, from a mapping file (`stitcher ingest --mentions-from`).

    Formats: a JSON object ``{"articles/a.md": ["Acme", "Globex"], ...}``; JSON Lines with
    ``{"doc": "articles/a.md", "mentions": [...]}`` per line; or CSV with columns `doc` and
    `mention` (one row per pair). A key names a document by doc id, by the path given to ingest,
    or by a trailing part of either (`a.md` matches `articles/a.md`).

    Raises:
        LoadError: The file cannot be read or has none of these shapes.
    """
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise LoadError(f"{path}: cannot read mentions file: {error}") from None
    found: dict[str, list[str]] = {}
    if path.suffix.lower() == ".csv":
        for line, row in _csv_rows(path, text):
            doc, name = str(row.get("doc", "")).strip(), str(row.get("mention", "")).strip()
            if not doc or not name:
                raise LoadError(f"{path}:{line}: a mentions CSV needs `doc` and `mention` columns")
            found.setdefault(doc, []).append(name)
    elif text.lstrip().startswith("{") and path.suffix.lower() == ".json":
        try:
            mapping = json.loads(text)
        except json.JSONDecodeError as error:
            raise LoadError(f"{path}: not JSON ({error.msg})") from None
        for doc, names in mapping.items():
            found.setdefault(str(doc), []).extend(_string_list(names, str(path), str(doc)))
    else:
        for line, row in _json_rows(path, text):
            doc = str(row.get("doc") or "").strip()
            if not doc:
                raise LoadError(f"{path}:{line}: each line needs `doc` and `mentions`")
            where = f"{path}:{line}"
            found.setdefault(doc, []).extend(_string_list(row.get("mentions"), where, "mentions"))
    return {doc: tuple(dict.fromkeys(names)) for doc, names in found.items()}


def mentions_for(doc_id: str, source: str, mapping: Mapping[str, Sequence[str]]) -> list[str]:
    """The names `mapping` gives for one document (every key that names it contributes)."""
    names: list[str] = []
    for key, listed in mapping.items():
        if _names_document(key, doc_id) or _names_document(key, source):
            names.extend(listed)
    return list(dict.fromkeys(names))


def _names_document(key: str, path: str) -> bool:
    key, path = key.replace("\\", "/").strip("/"), path.replace("\\", "/")
    return bool(key) and (path == key or path.endswith("/" + key))

"""The stored layout of a chunk, shared by every store: property names, kinds and value rules.

Both stores go through these functions, so a record round-trips the same way in memory and in
Weaviate, and a filter means the same thing in both. Nothing here imports weaviate.

Layout: the fixed properties below, plus one property per extra metadata key (front matter such as
"author" or "rating"), added on demand. An extra property remembers the key it came from in its
description, because a key is sanitised into a valid GraphQL name (作者 -> meta_..., "my-key" ->
my_key_<hash>) and the server lowercases the first letter of property names.
"""

from __future__ import annotations

import hashlib
import json
import re
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timezone
from typing import Any, Literal

from stitcher.errors import FilterError, MetadataConflict, TenancyMismatch, setting
from stitcher.models import ChunkContext, ChunkRecord, CollectionSettings
from stitcher.segment import keyword_text

Kind = Literal["text", "word", "int", "number", "bool", "date", "uuid", "text[]"]
"""Value kinds. "text" is matched as a whole value (field tokenization); "word" word by word."""

#: Properties every chunk has (from ChunkRecord's own fields). text_seg holds keyword_text(text).
RECORD_PROPERTIES: dict[str, Kind] = {
    "text": "word",
    "text_seg": "text",
    "doc_id": "text",
    "doc_hash": "text",
    "chunk_hash": "text",
    "source": "text",
    "parent_id": "uuid",
    "chunk_index": "int",
    "start": "int",
    "end": "int",
    "doc_length": "int",
    "starts_sentence": "bool",
    "ends_sentence": "bool",
    "context_before": "text",
    "context_after": "text",
    "context_chunks": "text",
    "rules": "text",
}

#: Metadata keys with a fixed property of their own.
KNOWN_METADATA: dict[str, Kind] = {
    "title": "word",
    "lang": "text",
    "page": "int",
    "line": "int",
    "date": "date",
    "tags": "text[]",
}

CORE_PROPERTIES: dict[str, Kind] = {**RECORD_PROPERTIES, **KNOWN_METADATA}

# Refused by the server ("id", "_id", "_additional"), by the client ("vector"), or easily confused
# with object metadata in query results.
# "mentions_ref" is the reference property to entities (stitcher.graph.paths.MENTIONS_REF).
_RESERVED = {
    "id",
    "_id",
    "_additional",
    "vector",
    "vectors",
    "uuid",
    "score",
    "distance",
    "mentions_ref",
}
_VALID_NAME = re.compile(r"[_A-Za-z][_0-9A-Za-z]*")
_MAX_NAME = 200  # the server allows 231 characters; leave room for prefixes and hashes

#: Marks the collection description as stitcher's settings record.
SETTINGS_KEY = "stitcher_settings"


@dataclass(frozen=True)
class ExtraProperty:
    """A property added for one metadata key."""

    name: str
    key: str
    kind: Kind


def property_name(key: str) -> str:
    """The property name a metadata key is stored under.

    Valid names are kept (first letter lowercased, as the server does). Anything else has its
    invalid characters replaced and a short hash of the original appended, so different keys
    cannot collide; reserved and core names get a "meta_" prefix.
    """
    if key in KNOWN_METADATA:
        return key
    name = key
    if not _VALID_NAME.fullmatch(name) or len(name) > _MAX_NAME:
        cleaned = re.sub(r"[^_0-9A-Za-z]", "_", key)[:_MAX_NAME]
        digest = hashlib.sha256(key.encode("utf-8")).hexdigest()[:8]
        name = f"{cleaned}_{digest}"
        if not _VALID_NAME.fullmatch(name):
            name = f"meta_{name}"
    name = name[0].lower() + name[1:]
    if name in _RESERVED or name in CORE_PROPERTIES:
        name = f"meta_{name}"
    return name


def kind_of(value: Any) -> Kind | None:
    """The kind a new property gets for this Python value; None when it cannot be stored."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, (datetime, date)):
        return "date"
    if isinstance(value, (list, tuple)) and all(isinstance(item, str) for item in value):
        return "text[]"
    return None


def to_utc(value: datetime | date) -> datetime:
    """A timezone-aware UTC datetime; naive values and plain dates are taken as UTC."""
    if not isinstance(value, datetime):
        value = datetime(value.year, value.month, value.day)
    if value.tzinfo is None:
        return value.replace(tzinfo=timezone.utc)
    return value.astimezone(timezone.utc)


def parse_date(value: Any) -> datetime:
    """A UTC datetime from a datetime, date or ISO-8601 string; ValueError otherwise."""
    if isinstance(value, (datetime, date)):
        return to_utc(value)
    if isinstance(value, str):
        text = value.strip()
        if text.endswith(("Z", "z")):  # fromisoformat accepts "Z" only from Python 3.11 on
            text = text[:-1] + "+00:00"
        return to_utc(datetime.fromisoformat(text))
    raise ValueError(f"not a date: {value!r}")


def store_value(kind: Kind, value: Any) -> Any:
    """`value` converted for a property of `kind`; MetadataConflict when it does not fit."""
    if kind in ("text", "word") and isinstance(value, str):
        return value
    if kind == "int" and isinstance(value, int) and not isinstance(value, bool):
        return value
    if kind == "number" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if kind == "bool" and isinstance(value, bool):
        return value
    if kind == "date" and isinstance(value, (datetime, date)):
        return to_utc(value)
    is_list = isinstance(value, (list, tuple))
    if kind == "text[]" and is_list and all(isinstance(item, str) for item in value):
        return list(value)
    raise MetadataConflict(f"a {type(value).__name__} value cannot be stored as {kind}")


def _known_metadata_value(key: str, value: Any) -> Any:
    """Lenient conversion for the fixed keys: front matter often gives `title: 1984` or a tag."""
    kind = KNOWN_METADATA[key]
    if kind == "word" and isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    if kind == "text[]" and isinstance(value, str):
        return [value]
    if kind == "text[]" and isinstance(value, (list, tuple)):
        return [str(item) for item in value]
    if kind == "date" and isinstance(value, str):
        try:
            return parse_date(value)
        except ValueError:
            raise MetadataConflict(f"{value!r} is not an ISO-8601 date") from None
    return store_value(kind, value)


def is_empty(value: Any) -> bool:
    """Values that are not stored at all (and so do not come back)."""
    return value is None or (isinstance(value, (list, tuple)) and not value)


def plan_properties(
    record: ChunkRecord, extras: Mapping[str, ExtraProperty]
) -> tuple[dict[str, Any], list[ExtraProperty]]:
    """Metadata properties of one record and the extra properties that do not exist yet.

    Args:
        record: The chunk to store.
        extras: Existing extra properties by name (not modified).

    Returns:
        Property values for the metadata (fixed and extra keys, empty values dropped) and the
        new extra properties these values need.

    Raises:
        MetadataConflict: A value does not fit its property; the message names key and document.
    """
    values: dict[str, Any] = {}
    new: list[ExtraProperty] = []
    for key, value in record.metadata.items():
        if is_empty(value):
            continue
        try:
            if key in KNOWN_METADATA:
                values[key] = _known_metadata_value(key, value)
                continue
            name = property_name(key)
            existing = extras.get(name)
            if existing is not None and existing.key != key:
                raise MetadataConflict(
                    f"is stored as property {name!r}, which already holds key {existing.key!r}"
                )
            if existing is None:
                kind = kind_of(value)
                if kind is None:
                    raise MetadataConflict(
                        f"a {type(value).__name__} value cannot be stored "
                        "(use str, int, float, bool, a date or a list of str)"
                    )
                existing = ExtraProperty(name, key, kind)
                new.append(existing)
            values[name] = store_value(existing.kind, value)
        except MetadataConflict as exc:
            raise MetadataConflict(
                f"metadata {key!r} of document {record.doc_id!r}: {exc}; "
                "make the value the same type in every document"
            ) from None
    return values, new


def record_to_properties(record: ChunkRecord, metadata_values: Mapping[str, Any]) -> dict[str, Any]:
    """Every property value of one chunk object (without its id and vector)."""
    properties: dict[str, Any] = {
        "text": record.text,
        "text_seg": keyword_text(record.text),
        "doc_id": record.doc_id,
        "doc_hash": record.doc_hash,
        "chunk_hash": record.chunk_hash,
        "source": record.source,
        "chunk_index": record.chunk_index,
        "start": record.start,
        "end": record.end,
        "doc_length": record.doc_length,
    }
    if record.parent_id:
        properties["parent_id"] = record.parent_id
    for edge in ("starts_sentence", "ends_sentence"):
        if getattr(record, edge) is not None:
            properties[edge] = getattr(record, edge)
    if record.rules is not None:
        properties["rules"] = record.rules
    if record.context is not None:
        properties["context_before"] = record.context.before
        properties["context_after"] = record.context.after
        properties["context_chunks"] = json.dumps(record.context.neighbours, separators=(",", ":"))
    properties.update(metadata_values)
    return properties


def properties_to_record(
    object_id: str, properties: Mapping[str, Any], extras: Mapping[str, ExtraProperty]
) -> ChunkRecord:
    """The ChunkRecord stored as `properties` (inverse of `record_to_properties`)."""
    metadata: dict[str, Any] = {}
    for name, value in properties.items():
        if is_empty(value):
            continue
        if name in KNOWN_METADATA:
            metadata[name] = _read_value(KNOWN_METADATA[name], value)
        elif name in extras:
            metadata[extras[name].key] = _read_value(extras[name].kind, value)
    parent = properties.get("parent_id")
    return ChunkRecord(
        id=str(object_id),
        doc_id=properties["doc_id"],
        doc_hash=properties["doc_hash"],
        chunk_index=int(properties["chunk_index"]),
        start=int(properties["start"]),
        end=int(properties["end"]),
        text=properties["text"],
        source=properties["source"],
        chunk_hash=properties["chunk_hash"],
        doc_length=int(properties.get("doc_length") or 0),
        parent_id=str(parent) if parent else None,
        metadata=metadata,
        starts_sentence=_optional_bool(properties.get("starts_sentence")),
        ends_sentence=_optional_bool(properties.get("ends_sentence")),
        context=_read_context(properties),
        rules=properties.get("rules") or None,
    )


def _read_context(properties: Mapping[str, Any]) -> ChunkContext | None:
    raw = properties.get("context_chunks")
    if raw is None:
        return None
    neighbours = tuple((int(i), int(a), int(b)) for i, a, b in json.loads(raw))
    return ChunkContext(
        str(properties.get("context_before") or ""),
        str(properties.get("context_after") or ""),
        neighbours,
    )


def _optional_bool(value: Any) -> bool | None:
    return None if value is None else bool(value)


def _read_value(kind: Kind, value: Any) -> Any:
    if kind == "date" and isinstance(value, (datetime, date)):
        return to_utc(value)
    if kind == "date" and isinstance(value, str):
        return parse_date(value)
    if kind == "text[]":
        return list(value)
    if kind == "int" and isinstance(value, float):  # JSON numbers may come back as floats
        return int(value)
    return value


def settings_to_description(settings: CollectionSettings) -> str:
    """The collection description that records `settings` (JSON)."""
    return json.dumps({SETTINGS_KEY: settings.recorded()}, sort_keys=True)


def settings_from_description(description: str | None) -> CollectionSettings | None:
    """The settings recorded by `settings_to_description`, or None for any other description."""
    if not description:
        return None
    try:
        payload = json.loads(description)[SETTINGS_KEY]
        return CollectionSettings(**payload)
    except (ValueError, KeyError, TypeError):
        return None


def extra_from_description(name: str, kind: Kind, description: str | None) -> ExtraProperty:
    """An extra property read back from the schema; its description is the original key."""
    return ExtraProperty(name=name, key=description or name, kind=kind)


#: The field users filter on for a document's source: the name of the folder it was ingested
#: from (or `--source`), i.e. the first segment of its `doc_id`. It has no property of its own:
#: the stores match it on `doc_id` (stitcher.store.weaviate.filters.source_filter).
SOURCE_FIELD = "source"
#: The field for a document's file path as ingested: the stored `source` property, whose name
#: predates sources (renaming the property would orphan every existing collection's chunks).
PATH_FIELD = "path"
PATH_PROPERTY = "source"


def source_names(condition: Any) -> list[str]:
    """The source names a condition on SOURCE_FIELD names; FilterError for an operator that
    makes no sense on a name. (A `*` in a name matches any one character, see
    contains_pattern.)"""
    if condition.op not in ("eq", "ne", "any"):
        raise FilterError(
            f"filter on {SOURCE_FIELD!r} (the name of the folder a document was ingested from): "
            f"use =, != or a,b lists; {PATH_FIELD}~text matches part of the file path"
        )
    names = filter_values(SOURCE_FIELD, "text", condition.value)
    if any("/" in name for name in names):
        raise FilterError(
            f"filter on {SOURCE_FIELD!r}: a source name has no '/'; "
            f"{PATH_FIELD}=... matches the file path"
        )
    return [str(name) for name in names]


def resolve_field(field: str, extras: Mapping[str, ExtraProperty]) -> tuple[str, Kind]:
    """The property name and kind a filter field refers to; FilterError for unknown fields.

    `path` is the stored `source` property; `source` itself (the source name) is matched on
    `doc_id` by the stores and must not reach here. Bookkeeping properties stay filterable
    but the error lists only the fields `stitcher fields` shows (user_fields).
    """
    if field == PATH_FIELD:
        return PATH_PROPERTY, "text"
    if field in CORE_PROPERTIES and field not in ("text_seg", PATH_PROPERTY):
        return field, CORE_PROPERTIES[field]
    name = property_name(field)
    if name in extras:
        return name, extras[name].kind
    known = list(user_fields(extras))
    raise FilterError(f"unknown field {field!r} in filter; known fields: {', '.join(known)}")


#: Core properties that are bookkeeping, not something a user filters on.
_INTERNAL = {
    "text_seg",
    "doc_hash",
    "chunk_hash",
    "parent_id",
    "doc_length",
    "starts_sentence",
    "ends_sentence",
    "context_before",
    "context_after",
    "context_chunks",
    "rules",
}


def user_fields(extras: Mapping[str, ExtraProperty]) -> dict[str, Kind]:
    """Filterable fields under the names users write in --where (extras by original key)."""
    found: dict[str, Kind] = {
        name: kind for name, kind in CORE_PROPERTIES.items() if name not in _INTERNAL
    }
    for extra in extras.values():
        found[extra.key] = extra.kind
    # `source` stays, meaning the source name (SOURCE_FIELD); the file path is `path`, which
    # wins over a front-matter key of that name (as resolve_field does).
    found[PATH_FIELD] = "text"
    return dict(sorted(found.items()))


def filter_value(field: str, kind: Kind, value: Any) -> Any:
    """A filter value converted to the field's kind; FilterError when it cannot be."""
    try:
        if kind == "date":
            return parse_date(value)
        if kind == "int":
            if isinstance(value, bool):
                raise ValueError
            if isinstance(value, float) and not value.is_integer():
                raise ValueError
            return int(value)
        if kind == "number":
            if isinstance(value, bool):
                raise ValueError
            return float(value)
        if kind == "bool":
            if isinstance(value, bool):
                return value
            if isinstance(value, str) and value.lower() in ("true", "false"):
                return value.lower() == "true"
            raise ValueError
        if kind == "uuid":
            return str(uuid.UUID(str(value)))
        if isinstance(value, str):
            return value
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return str(value)
        raise ValueError
    except ValueError:
        expected = _EXPECTED.get(kind, kind)
        raise FilterError(
            f"filter value {value!r} does not fit field {field!r}: expected {expected}"
        ) from None


_EXPECTED = {
    "date": "a date like 2021-03-04 or 2021-03-04T10:00:00+08:00 (ISO 8601)",
    "int": "a whole number",
    "number": "a number",
    "bool": "true or false",
    "uuid": "a UUID",
}


def filter_values(field: str, kind: Kind, value: Any) -> list[Any]:
    """The values of an "any" condition, each converted; FilterError when there are none."""
    items: Sequence[Any] = (
        list(value) if isinstance(value, (list, tuple, set, frozenset)) else [value]
    )
    if not items:
        raise FilterError(f"filter on {field!r}: 'any' needs at least one value")
    return [filter_value(field, kind, item) for item in items]


def contains_pattern(value: str) -> str:
    """The `like` pattern for a substring match.

    Weaviate's `like` has no escape for its wildcards `*` and `?`, so a literal `*` or `?` in the
    value becomes `?` (any one character): the filter can then also match a different character
    in that position, never miss a real match. All other characters match literally.
    """
    return "*" + value.replace("*", "?") + "*"


def tenancy_mismatch(
    collection: str, tenant: str | None, multi_tenant: bool
) -> TenancyMismatch | None:
    """The refusal of `tenant` (None: no tenant) on a collection that is `multi_tenant` or not,
    or None when they fit. One wording for every store."""
    if multi_tenant and tenant is None:
        return TenancyMismatch(
            f"collection {collection!r} is multi-tenant (one tenant per knowledge base): name "
            f"the tenant with {setting('tenant', 'NAME')}; `stitcher tenants -c {collection}` "
            "lists them"
        )
    if not multi_tenant and tenant is not None:
        return TenancyMismatch(
            f"collection {collection!r} is single-tenant, so it has no tenant {tenant!r}: leave "
            f"out {setting('tenant')}, or keep tenants in another {setting('collection')} (the "
            "first ingest with a tenant creates it multi-tenant)"
        )
    return None


def no_tenants(collection: str) -> TenancyMismatch:
    """The refusal to list or change tenants of a single-tenant collection."""
    return TenancyMismatch(
        f"collection {collection!r} is single-tenant: it has no tenants (the first ingest with "
        f"{setting('tenant', 'NAME')} into a new {setting('collection')} creates a multi-tenant "
        "one)"
    )


def some_names(names: Sequence[str], shown: int = 10) -> str:
    """ "a, b, c" — the first `shown` of many, then how many more ("none" for none)."""
    if not names:
        return "none"
    listed = ", ".join(names[:shown])
    return listed if len(names) <= shown else f"{listed} and {len(names) - shown} more"

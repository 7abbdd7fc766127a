"""How an entity is stored in Weaviate: one collection per kind next to each chunk collection
("<Chunks>_Organization", "<Chunks>_Person"), and the object of one entity in it.

Layout of an entity object: `entity_id`, `name`, `aliases`, `name_keys` (name_key of name and
aliases: what filters and mentions match), each attribute twice (`country` as written,
`country_key` for matching), the declared links as raw ids (`supplier_of_ids`: kept even while
the target is not loaded), other columns as JSON in `extra`, `entity_hash` (skip unchanged
objects on reload), and one reference property per link direction (see
stitcher.graph.model.references_of).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from stitcher.graph.model import KINDS, Entity, declared_links, entity_collection, name_key
from stitcher.graph.paths import ID_PROPERTY, NAME_KEYS_PROPERTY, attribute_key_property

# weaviate itself is imported inside the functions that use it: importing the client costs
# about a second, which `stitcher --help`, the pure tests and the in-memory store should not pay.
if TYPE_CHECKING:
    import weaviate
    from weaviate.collections.classes.config import Property

#: The property holding an entity's content hash (stitcher.graph.model.content_hash).
HASH_PROPERTY = "entity_hash"


def stored_entities(
    client: weaviate.WeaviateClient, collection: str, kinds: Iterable[str]
) -> list[tuple[Entity, str | None]]:
    """Every stored entity of `kinds` for chunk collection `collection`, with its content hash
    (walks the entity collections; a kind never loaded has none)."""
    found = []
    for kind in kinds:
        name = entity_collection(collection, kind)
        if not client.collections.exists(name):
            continue
        for obj in client.collections.use(name).iterator(include_vector=False):
            found.append((entity_from_properties(kind, obj.properties), _hash_of(obj)))
    return found


def _hash_of(obj: Any) -> str | None:
    value = obj.properties.get(HASH_PROPERTY)
    return str(value) if value else None


def entity_to_properties(entity: Entity) -> dict[str, Any]:
    """The properties of `entity`'s object (its content hash and references added apart)."""
    properties: dict[str, Any] = {
        ID_PROPERTY: entity.id,
        "name": entity.name,
        "aliases": list(entity.aliases),
        NAME_KEYS_PROPERTY: list(entity.keys),
    }
    for attribute in KINDS[entity.kind].attributes:
        value = entity.attributes.get(attribute)
        if value:
            properties[attribute] = value
            properties[attribute_key_property(attribute)] = name_key(value)
    for link in declared_links(entity.kind):
        properties[f"{link}_ids"] = list(entity.links.get(link, ()))
    properties["extra"] = json.dumps(dict(entity.extra), ensure_ascii=False, sort_keys=True)
    return properties


def entity_from_properties(kind: str, properties: Mapping[str, Any]) -> Entity:
    """The entity of `kind` a stored object's properties describe."""
    attributes = {a: str(properties[a]) for a in KINDS[kind].attributes if properties.get(a)}
    links = {
        link: tuple(properties[f"{link}_ids"])
        for link in declared_links(kind)
        if properties.get(f"{link}_ids")
    }
    try:
        extra = json.loads(properties.get("extra") or "{}")
    except ValueError:
        extra = {}
    return Entity(
        kind=kind,
        id=str(properties[ID_PROPERTY]),
        name=str(properties["name"]),
        aliases=tuple(properties.get("aliases") or ()),
        attributes=attributes,
        links=links,
        extra=extra if isinstance(extra, dict) else {},
    )


def entity_properties(kind: str) -> list[Property]:
    """The schema of the collection holding entities of `kind` (references added apart)."""
    from weaviate.classes.config import DataType, Property, Tokenization

    def exact(name: str, data_type: DataType = DataType.TEXT) -> Property:
        return Property(
            name=name,
            data_type=data_type,
            tokenization=Tokenization.FIELD,
            index_filterable=True,
            index_searchable=False,
        )

    properties = [
        exact(ID_PROPERTY),
        Property(name="name", data_type=DataType.TEXT, tokenization=Tokenization.WORD),
        exact("aliases", DataType.TEXT_ARRAY),
        exact(NAME_KEYS_PROPERTY, DataType.TEXT_ARRAY),
        exact(HASH_PROPERTY),
        Property(
            name="extra",
            data_type=DataType.TEXT,
            index_filterable=False,
            index_searchable=False,
        ),
    ]
    for attribute in KINDS[kind].attributes:
        properties.append(
            Property(name=attribute, data_type=DataType.TEXT, tokenization=Tokenization.WORD)
        )
        properties.append(exact(attribute_key_property(attribute)))
    for link in declared_links(kind):
        properties.append(exact(f"{link}_ids", DataType.TEXT_ARRAY))
    return properties

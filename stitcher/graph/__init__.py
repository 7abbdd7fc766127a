"""Entities and references in Weaviate: organizations, people, their links, and the
organizations documents mention — followed by filters such as `mentions.country=France`.

Nothing here imports weaviate or a store: the Weaviate side (entity collections, reference
filters, mention links) is stitcher.store.weaviate.entities, .filters and .mentions, and
conditions read entities through the `EntityLookup` a store hands out.
"""

from __future__ import annotations

from stitcher.graph.conditions import (
    SENTIMENT_THRESHOLD,
    country_condition,
    news_conditions,
    org_condition,
    sentiment_condition,
)
from stitcher.graph.model import (
    KINDS,
    LINKS,
    Entity,
    entity_collection,
    entity_uuid,
    mentions_for,
    name_key,
    read_entities,
    read_mentions_file,
)
from stitcher.graph.paths import MENTIONS, MENTIONS_REF, RefPath, is_path, parse_path, valid_paths
from stitcher.graph.resolve import AmbiguousEntity, EntityLookup, Resolver, UnknownEntity

__all__ = [
    "KINDS",
    "LINKS",
    "MENTIONS",
    "MENTIONS_REF",
    "SENTIMENT_THRESHOLD",
    "AmbiguousEntity",
    "Entity",
    "EntityLookup",
    "RefPath",
    "Resolver",
    "UnknownEntity",
    "country_condition",
    "entity_collection",
    "entity_uuid",
    "is_path",
    "mentions_for",
    "name_key",
    "news_conditions",
    "org_condition",
    "parse_path",
    "read_entities",
    "read_mentions_file",
    "sentiment_condition",
    "valid_paths",
]

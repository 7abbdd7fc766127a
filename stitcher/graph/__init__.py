"""Entities and references in Weaviate: organizations, people, their links, and the
organizations documents mention — followed by filters such as `mentions.country=France`.

Pure parts (model, resolve, paths) never import weaviate; `store` and `conditions` talk to the
server through a connected client.
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
from stitcher.graph.resolve import AmbiguousEntity, Resolver, UnknownEntity

__all__ = [
    "KINDS",
    "LINKS",
    "MENTIONS",
    "MENTIONS_REF",
    "SENTIMENT_THRESHOLD",
    "AmbiguousEntity",
    "Entity",
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

"""Conditions an agent or the CLI adds for seed 000's arguments: organization, country,
sentiment. They are plain `Condition`s on reference paths, so they combine with any --where.
"""

from __future__ import annotations

from stitcher.errors import UsageError
from stitcher.filters import Condition
from stitcher.graph.model import MENTIONED_KIND
from stitcher.graph.paths import MENTIONS
from stitcher.graph.resolve import EntityLookup

#: |sentiment| above this counts as clearly positive or negative (the seed's ±0.5).
SENTIMENT_THRESHOLD = 0.5

SENTIMENTS = ("positive", "negative")


def org_condition(entities: EntityLookup, name: str) -> Condition:
    """`mentions.id = <id>` for the one organization `name` means (fuzzy, aliases count).

    Args:
        entities: The entities of the chunk collection searched (`ChunkStore.entities()`).
        name: The organization as the user or agent wrote it.

    Raises:
        AmbiguousEntity: Several organizations fit; `.candidates` lists their names and the
            message is the follow-up question to ask (exit code 2 in the CLI).
        UnknownEntity: None fits (exit code 2).
    """
    resolver = entities.resolver(MENTIONED_KIND)
    entity = resolver.one(name, where=f"collection {entities.collection!r}")
    return Condition(f"{MENTIONS}.id", "eq", entity.id)


def country_condition(country: str) -> Condition:
    """Chunks mentioning an organization based in `country` (full name, any case)."""
    if not country.strip():
        raise UsageError("the country is empty; give a full name such as France")
    return Condition(f"{MENTIONS}.country", "eq", country.strip())


def sentiment_condition(sentiment: str, field: str = "sentiment") -> Condition:
    """`sentiment > 0.5` for "positive", `sentiment < -0.5` for "negative"."""
    value = sentiment.strip().lower()
    if value == "positive":
        return Condition(field, "gt", SENTIMENT_THRESHOLD)
    if value == "negative":
        return Condition(field, "lt", -SENTIMENT_THRESHOLD)
    raise UsageError(f"sentiment must be one of {', '.join(SENTIMENTS)}, not {sentiment!r}")


def news_conditions(
    entities: EntityLookup,
    *,
    organization: str | None = None,
    country: str | None = None,
    sentiment: str | None = None,
) -> tuple[Condition, ...]:
    """Seed 000's NewsInput arguments as conditions (all must hold); None arguments add none.

    `entities` is read only when `organization` is given.

    Raises:
        AmbiguousEntity: `organization` fits several organizations (ask which one).
        UnknownEntity: no organization is called `organization`.
        UsageError: `sentiment` is neither "positive" nor "negative".
    """
    found: list[Condition] = []
    if organization and organization.strip():
        found.append(org_condition(entities, organization.strip()))
    if country and country.strip():
        found.append(country_condition(country))
    if sentiment and sentiment.strip():
        found.append(sentiment_condition(sentiment))
    return tuple(found)

"""Filters evaluated in memory with Weaviate's semantics: whole-value matching on
field-tokenized text, word-by-word matching on `text` and `title`, `like` patterns, source names,
and paths along entity references."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from stitcher.errors import FilterError
from stitcher.filters import Condition, Where
from stitcher.graph.model import MENTIONED_KIND, Entity, build_graph
from stitcher.graph.paths import (
    MENTIONS,
    PathTest,
    entity_values,
    is_path,
    no_links_message,
    path_test,
)
from stitcher.store.memory.entities import MemoryEntities
from stitcher.store.schema import (
    SOURCE_FIELD,
    ExtraProperty,
    Kind,
    contains_pattern,
    filter_value,
    filter_values,
    property_name,
    resolve_field,
    source_names,
)

WORD_RE = re.compile(r"[^\W_]+")
_LIKE_TOKEN_RE = re.compile(r"(?:[^\W_]|[*?])+")

Predicate = Callable[[dict[str, Any]], bool]


class WherePredicates:
    """Turns a `Where` into a test on one object's stored properties, for one collection: its
    metadata properties (`extras`) and its entities, as they are when the filter runs."""

    def __init__(
        self, collection: str, extras: dict[str, ExtraProperty], entities: MemoryEntities
    ) -> None:
        self._collection = collection
        self._extras = extras
        self._entities = entities

    def predicate(self, where: Where) -> Predicate:
        required = [self._condition(condition) for condition in where.all_of]
        alternatives = [self._condition(condition) for condition in where.any_of]

        def matches(properties: dict[str, Any]) -> bool:
            if not all(test(properties) for test in required):
                return False
            return not alternatives or any(test(properties) for test in alternatives)

        return matches

    def _condition(self, condition: Condition) -> Predicate:
        if is_path(condition.field):
            return self._path_condition(condition)
        if condition.field == SOURCE_FIELD:
            return _source_condition(condition)
        name, kind = resolve_field(condition.field, self._extras)
        op = condition.op
        if op == "any":
            options = filter_values(condition.field, kind, condition.value)
            return lambda p: any(_equals(kind, p.get(name), option) for option in options)
        if op == "contains":
            if kind not in ("text", "word", "text[]"):
                raise FilterError(f"'contains' works on text fields, not on {condition.field!r}")
            pattern = contains_pattern(str(condition.value))
            return lambda p: _like(kind, p.get(name), pattern)
        value = filter_value(condition.field, kind, condition.value)
        if op == "eq":
            return lambda p: _equals(kind, p.get(name), value)
        if op == "ne":
            return lambda p: not _equals(kind, p.get(name), value)
        compare = _COMPARISONS.get(op)
        if compare is None:
            raise FilterError(f"unknown filter operator {op!r}")
        return lambda p: _compare(p.get(name), value, compare)

    # -- graph references (issue 14): the store protocol's reference filters ----------------

    def _path_condition(self, condition: Condition) -> Predicate:
        """A condition on a path (`mentions.country=France`), run as Weaviate runs its reference
        filter (stitcher.store.weaviate.filters.path_filter), but at query time: a chunk's raw
        `mentions` resolve to organizations as its `mentions_ref` would (strictly, by name or
        alias, against the entities loaded now, as after `stitcher entities load` re-linked
        them), the path's links are followed, and the entities reached are compared."""
        test = path_test(condition)  # validates the path first: its errors are clearer
        raw = property_name(MENTIONS)
        if not self._entities.exists(MENTIONED_KIND) or raw not in self._extras:
            raise FilterError(no_links_message(condition.field, self._collection))
        graph = build_graph(self._entities.entities())
        resolver = self._entities.resolver(MENTIONED_KIND)
        matches_entity = _entity_test(test)
        # Chunks of one document share their mentions: resolve and follow once per list.
        answers: dict[tuple[str, ...], bool] = {}

        def matches(properties: dict[str, Any]) -> bool:
            value = properties.get(raw)
            names = (value,) if isinstance(value, str) else tuple(value or ())
            if names not in answers:
                reached = {
                    (entity.kind, entity.id)
                    for entity in map(resolver.resolve, names)
                    if entity is not None
                }
                for link in test.path.links:
                    reached = {target for key in reached for target in graph.references[key][link]}
                answers[names] = any(matches_entity(graph.entities[key]) for key in reached)
            return answers[names]

        return matches


def _entity_test(test: PathTest) -> Callable[[Entity], bool]:
    """Whether one entity a path reached matches, as Weaviate compares the property the path
    ends on (exact on field-tokenized values; `like` on each of them)."""
    field = test.path.field
    if test.op == "any":
        wanted = set(test.values)
        return lambda entity: bool(wanted.intersection(entity_values(entity, field)))
    (value,) = test.values
    if test.op == "contains":
        pattern = contains_pattern(value)
        return lambda entity: _like("text[]", entity_values(entity, field), pattern)
    if test.op == "ne":
        return lambda entity: value not in entity_values(entity, field)
    return lambda entity: value in entity_values(entity, field)


def _like_regex(pattern: str) -> re.Pattern[str]:
    parts = (".*" if c == "*" else "." if c == "?" else re.escape(c) for c in pattern)
    return re.compile("".join(parts), re.DOTALL)


def _like(kind: Kind, stored: Any, pattern: str) -> bool:
    if stored is None:
        return False
    if kind == "text[]":
        regex = _like_regex(pattern)
        return any(regex.fullmatch(item) for item in stored)
    if kind == "word":
        # Weaviate splits the pattern into words (keeping wildcards) and ANDs them; each must
        # match one word of the value.
        words = WORD_RE.findall(stored.lower())
        pieces = _LIKE_TOKEN_RE.findall(pattern.lower())
        return all(any(_like_regex(piece).fullmatch(word) for word in words) for piece in pieces)
    return bool(_like_regex(pattern).fullmatch(stored))


def _equals(kind: Kind, stored: Any, value: Any) -> bool:
    if stored is None:
        return False
    if kind == "text[]":
        return value in stored
    if kind == "word":
        # Weaviate tokenizes both sides: every word of the value must occur in the property.
        words = set(WORD_RE.findall(stored.lower()))
        wanted = WORD_RE.findall(str(value).lower())
        return bool(wanted) and all(word in words for word in wanted)
    if kind == "uuid":
        return str(stored) == value
    return bool(stored == value)


_COMPARISONS: dict[str, Callable[[Any, Any], bool]] = {
    "gt": lambda a, b: a > b,
    "ge": lambda a, b: a >= b,
    "lt": lambda a, b: a < b,
    "le": lambda a, b: a <= b,
}


def _compare(stored: Any, value: Any, compare: Callable[[Any, Any], bool]) -> bool:
    if stored is None:
        return False
    if isinstance(stored, list):
        return any(compare(item, value) for item in stored)
    return compare(stored, value)


def _source_condition(condition: Condition) -> Predicate:
    """A source-name condition, on `doc_id` as stitcher.store.weaviate.filters.source_filter."""
    names = source_names(condition)

    def under(properties: dict[str, Any]) -> bool:
        doc_id = str(properties.get("doc_id", ""))
        return any(doc_id == name or doc_id.startswith(name + "/") for name in names)

    return (lambda p: not under(p)) if condition.op == "ne" else under

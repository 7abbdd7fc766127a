"""Where -> weaviate `Filter`. Values travel as typed filter values, never pasted into a query."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from stitcher.errors import FilterError
from stitcher.filters import Condition, Where
from stitcher.graph.paths import (
    ID_PROPERTY,
    MENTIONS_REF,
    NAME_KEYS_PROPERTY,
    attribute_key_property,
    is_path,
    no_links_message,
    path_test,
)
from stitcher.store.schema import (
    SOURCE_FIELD,
    ExtraProperty,
    contains_pattern,
    filter_value,
    filter_values,
    resolve_field,
    source_names,
)

# weaviate itself is imported inside the methods that use it: importing the client costs about
# a second, which `stitcher --help`, the pure tests and the in-memory store should not pay.
if TYPE_CHECKING:
    from weaviate.collections.classes.filters import _Filters


def translate(
    where: Where | None,
    extras: Mapping[str, ExtraProperty],
    references: Collection[str] = (),
    collection: str = "",
) -> _Filters | None:
    """The weaviate filter for `where`, or None when it has no conditions.

    Args:
        where: Conditions ANDed (`all_of`) plus one OR group (`any_of`).
        extras: The collection's extra properties, to resolve metadata keys to property names.
        references: The collection's reference properties; dotted fields (`mentions.country`)
            need `mentions_ref` among them.
        collection: The collection's name, for messages.

    Raises:
        FilterError: A field is unknown, a value does not fit its field, or an op is misused.
    """
    from weaviate.classes.query import Filter

    if not where:
        return None
    parts = [_condition(condition, extras, references, collection) for condition in where.all_of]
    if where.any_of:
        alternatives = [
            _condition(condition, extras, references, collection) for condition in where.any_of
        ]
        parts.append(alternatives[0] if len(alternatives) == 1 else Filter.any_of(alternatives))
    return parts[0] if len(parts) == 1 else Filter.all_of(parts)


def _condition(
    condition: Condition,
    extras: Mapping[str, ExtraProperty],
    references: Collection[str],
    collection: str,
) -> _Filters:
    from weaviate.classes.query import Filter

    if is_path(condition.field):
        filter_ = path_filter(condition)  # validates the path first: its errors are clearer
        if MENTIONS_REF not in references:
            raise FilterError(no_links_message(condition.field, collection))
        return filter_
    if condition.field == SOURCE_FIELD:
        return source_filter(condition)
    name, kind = resolve_field(condition.field, extras)
    prop = Filter.by_property(name)
    op = condition.op
    if op == "any":
        values = filter_values(condition.field, kind, condition.value)
        if kind in ("text", "word", "text[]", "int"):
            return prop.contains_any(values)
        equals = [prop.equal(value) for value in values]
        return equals[0] if len(equals) == 1 else Filter.any_of(equals)
    if op == "contains":
        if kind not in ("text", "word", "text[]"):
            raise FilterError(f"'contains' works on text fields, not on {condition.field!r}")
        return prop.like(contains_pattern(str(condition.value)))
    value: Any = filter_value(condition.field, kind, condition.value)
    if op == "eq":
        return prop.equal(value)
    if op == "ne":
        return prop.not_equal(value)
    if op == "gt":
        return prop.greater_than(value)
    if op == "ge":
        return prop.greater_or_equal(value)
    if op == "lt":
        return prop.less_than(value)
    if op == "le":
        return prop.less_or_equal(value)
    raise FilterError(f"unknown filter operator {op!r}")


def source_filter(condition: Condition) -> _Filters:
    """A condition on the source name, matched on `doc_id` (the name, or the name and a `/`:
    a file ingested on its own has its name as id; a folder's files `name/...`)."""
    from weaviate.classes.query import Filter

    doc_id = Filter.by_property("doc_id")
    names = source_names(condition)
    matches = [
        test
        for name in names
        for test in (doc_id.equal(name), doc_id.like(name.replace("*", "?") + "/*"))
    ]
    either = Filter.any_of(matches)
    return Filter.not_(either) if condition.op == "ne" else either


def path_filter(condition: Condition, start: Sequence[str] = (MENTIONS_REF,)) -> _Filters:
    """The Weaviate reference filter for a condition on a path.

    Args:
        condition: A condition whose field is a path (`mentions.country`).
        start: The reference properties that lead from the chunk to the mentioned
            organizations; bench/graph_bench.py measures a layout with one more hop
            (chunk → document → organization).

    Raises:
        FilterError: Unknown path, or an operator that makes no sense on it.
    """
    from weaviate.classes.query import Filter

    test = path_test(condition)
    path = test.path
    chain = Filter.by_ref(start[0])
    for link in (*start[1:], *path.links):
        chain = chain.by_ref(link)
    if path.field == "id":
        prop = chain.by_property(ID_PROPERTY)
    elif path.field == "name":
        prop = chain.by_property(NAME_KEYS_PROPERTY)
    else:
        prop = chain.by_property(attribute_key_property(path.field))
    if test.op == "any":
        return prop.contains_any(list(test.values))
    (value,) = test.values
    if test.op == "contains":
        return prop.like(contains_pattern(value))
    if test.op == "ne":
        return prop.not_equal(value)
    return prop.equal(value)

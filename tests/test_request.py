"""SearchRequest (stitcher.request): one definition that survives the trip to the warm worker."""

from __future__ import annotations

import dataclasses
import json
import typing
from typing import Any

import pytest

from stitcher.errors import UsageError
from stitcher.filters import Condition, Where
from stitcher.request import WIRE_VERSION, SearchRequest, SqlJoin, WireError
from stitcher.store.base import FUSIONS

WHERE = Where(
    (Condition("lang", "eq", "zh"), Condition("tags", "any", ("city", "城市"))),
    (Condition("date", "ge", "2021-01-01"),),
)


def unlike_default(name: str, hint: Any, default: Any) -> Any:
    """A value of the field's type that differs from its default, chosen by the type alone, so a
    field added later gets one without this test changing (an unknown type fails loudly)."""
    types = set(typing.get_args(hint)) or {hint}
    types.discard(type(None))
    if bool in types:
        return not default
    if int in types:
        return default + 7
    if float in types:
        return 0.3
    if str in types:
        return f"{name} 值 ✓"
    if Where in types:
        return WHERE
    if SqlJoin in types:
        return SqlJoin(sql="select title from cities where country = 'France'", db="c.db")
    raise AssertionError(f"no sample value for field {name!r} of type {hint!r}: add one")


def every_field_changed() -> SearchRequest:
    hints = typing.get_type_hints(SearchRequest)
    values = {
        f.name: unlike_default(f.name, hints[f.name], f.default)
        for f in dataclasses.fields(SearchRequest)
    }
    return SearchRequest(**values)


def test_every_field_survives_the_trip_to_the_worker() -> None:
    request = every_field_changed()
    for field in dataclasses.fields(SearchRequest):
        assert getattr(request, field.name) != field.default, field.name
    # Through JSON, as the socket carries it.
    wire = json.loads(json.dumps(request.to_wire(), ensure_ascii=False))
    back = SearchRequest.from_wire(wire)
    assert back == request
    for field in dataclasses.fields(SearchRequest):
        assert getattr(back, field.name) == getattr(request, field.name), field.name


def test_the_default_request_survives_the_trip_too() -> None:
    assert SearchRequest.from_wire(json.loads(json.dumps(SearchRequest().to_wire()))) == (
        SearchRequest()
    )


def test_another_version_or_an_unknown_field_is_refused() -> None:
    wire = SearchRequest(query="tea").to_wire()
    with pytest.raises(WireError, match="version"):
        SearchRequest.from_wire({**wire, "version": WIRE_VERSION + 1})
    with pytest.raises(WireError, match="version"):
        SearchRequest.from_wire(None)
    with pytest.raises(WireError, match="colour"):
        SearchRequest.from_wire({**wire, "request": {**wire["request"], "colour": "red"}})
    with pytest.raises(WireError, match="malformed"):
        SearchRequest.from_wire({**wire, "request": {**wire["request"], "where": {"all_of": []}}})


def test_alpha_is_automatic_unless_set() -> None:
    assert SearchRequest().alpha is None


def test_validate_names_the_setting() -> None:
    with pytest.raises(UsageError, match="alpha"):
        SearchRequest(alpha=1.5).validate()
    with pytest.raises(UsageError, match="fusion"):
        SearchRequest(fusion="mixed").validate()
    with pytest.raises(UsageError, match="limit"):
        SearchRequest(limit=0).validate()
    for fusion in FUSIONS:
        SearchRequest(fusion=fusion).validate()


def test_a_line_of_queries_is_ranked_by_its_own_query() -> None:
    request = SearchRequest(query=None, latest=True, limit=3, where=WHERE)
    assert request.lists_latest
    line = request.ranking("茶")
    assert (line.query, line.latest, line.limit, line.where) == ("茶", False, 3, WHERE)
    assert not line.lists_latest

"""Parsing of --where and the checks of filter values against stored ones (pure, no server)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from stitcher.errors import FilterError
from stitcher.filters import Condition, Where
from stitcher.filtervalues import fold_cases, missing_values
from stitcher.where import parse_condition, parse_where

STORED = {
    "tags": ["city", "coast", "City", "cities", "美食"],
    "lang": ["en", "zh"],
    "source": ["samples", "manuals"],
}
KINDS = {"tags": "text[]", "lang": "text", "source": "text", "title": "word", "page": "int"}


def lookup(field: str) -> Sequence[str]:
    asked.append(field)
    return STORED.get(field, [])


asked: list[str] = []


@pytest.fixture(autouse=True)
def _fresh() -> None:
    asked.clear()


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("lang==zh", Condition("lang", "eq", "zh")),
        ("lang=zh", Condition("lang", "eq", "zh")),
        ("lang == zh", Condition("lang", "eq", "zh")),
        ("tags==a,b", Condition("tags", "any", ("a", "b"))),
        ("title=='=x'", Condition("title", "eq", "=x")),
        ("lang!=zh", Condition("lang", "ne", "zh")),
        ("page>=3", Condition("page", "ge", "3")),
        ("title~Paris", Condition("title", "contains", "Paris")),
    ],
)
def test_double_equals_is_equals(expression: str, expected: Condition) -> None:
    assert parse_condition(expression) == expected


def test_a_lone_comparison_is_still_refused() -> None:
    with pytest.raises(FilterError, match="no value"):
        parse_condition("lang==")


def test_a_tag_matches_every_spelling_stored() -> None:
    where, notices = fold_cases(parse_where(["tags=CITY"]), lookup)
    assert where == Where((Condition("tags", "any", ("city", "City")),))
    assert notices == []


def test_a_tag_stored_in_one_spelling_becomes_that_spelling() -> None:
    where, _ = fold_cases(parse_where(["tags=Coast,美食"]), lookup)
    assert where == Where((Condition("tags", "any", ("coast", "美食")),))


def test_a_tag_nobody_has_is_named_with_the_nearest_stored() -> None:
    where, notices = fold_cases(parse_where(["tags=Citty"]), lookup)
    assert where == Where((Condition("tags", "eq", "Citty"),))  # still matches nothing
    assert notices == ["tags=Citty: no chunk has it; stored values of tags include city, cities"]


def test_not_a_tag_excludes_every_spelling() -> None:
    where, _ = fold_cases(parse_where(["tags!=city"]), lookup)
    assert where == Where((Condition("tags", "ne", "city"), Condition("tags", "ne", "City")))


def test_other_fields_are_left_alone_by_folding_and_not_looked_up() -> None:
    where = parse_where(["lang=ZH"], ["page>2"])
    assert fold_cases(where, lookup) == (where, [])
    assert asked == []


def test_missing_values_names_only_values_no_chunk_has() -> None:
    where = parse_where(["lang=zh", "source=sample"], ["lang=fr,en"])
    assert missing_values(where, KINDS, lookup) == [
        "source=sample: no chunk has it; stored values of source include samples",
        "lang=fr: no chunk has it; stored values of lang include en, zh",
    ]


def test_missing_values_skips_ranges_words_and_tags() -> None:
    where = parse_where(["page=3", "title=Nowhere", "lang>a", "tags=nothing"])
    assert missing_values(where, KINDS, lookup) == []
    assert asked == []


def test_a_field_with_no_values_says_so() -> None:
    where = parse_where(["tags=x"])
    _, notices = fold_cases(where, lambda field: [])
    assert notices == ["tags=x: no chunk has it; no chunk has any tags at all"]

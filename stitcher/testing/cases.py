"""The data the filter contracts run over: documents with metadata of every kind and the
documents each filter must select, and the entities, mentions and path filters of the
graph contract."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any

from stitcher.filters import Condition, Where
from stitcher.graph.model import Entity

CST = timezone(timedelta(hours=8))


EST = timezone(timedelta(hours=-5))


WEIRD = 'O\'Brien "the {chef}" \\ back'


FILTER_DOCS: dict[str, dict[str, Any]] = {
    "d1": {
        "source": "notes/a.md",
        "lang": "zh",
        "title": "Kernel Guide",
        "page": 1,
        "date": datetime(2024, 1, 1, 10, 0, tzinfo=CST),  # 02:00 UTC
        "tags": ["linux", "kernel"],
        "author": "Alice",
        "rating": 4.5,
        "draft": False,
    },
    "d2": {
        "source": "notes/b.md",
        "lang": "en",
        "title": "Weather Report",
        "page": 5,
        "date": datetime(2024, 1, 1, 3, 0, tzinfo=timezone.utc),
        "tags": ["weather"],
        "author": "Bob",
        "rating": 3.0,
        "draft": True,
    },
    "d3": {
        "source": "other/c{1}\\x.txt",
        "lang": "en",
        "title": "Cooking",
        "page": 10,
        "date": datetime(2024, 2, 1, 0, 0, tzinfo=EST),
        "author": WEIRD,
        "rating": 5.0,
    },
    "d4": {
        "source": "other/x*y.md",
        "lang": "de",
        "title": "Sonstiges",
        "page": 7,
        "date": datetime(2023, 12, 31, 23, 0, tzinfo=timezone.utc),
        "author": 'say "hi" {x} $y',
        "rating": 1.0,
    },
}


C = Condition


FILTER_CASES: list[tuple[Where, set[str]]] = [
    (Where((C("lang", "eq", "en"),)), {"d2", "d3"}),
    (Where((C("lang", "ne", "en"),)), {"d1", "d4"}),
    (Where((C("page", "gt", 5),)), {"d3", "d4"}),
    (Where((C("page", "ge", 5),)), {"d2", "d3", "d4"}),
    (Where((C("page", "lt", 5),)), {"d1"}),
    (Where((C("page", "le", 5),)), {"d1", "d2"}),
    (Where((C("page", "any", (1, 10)),)), {"d1", "d3"}),
    (Where((C("tags", "any", ("kernel", "weather")),)), {"d1", "d2"}),
    (Where((C("tags", "eq", "linux"),)), {"d1"}),
    (Where((C("path", "contains", "notes/"),)), {"d1", "d2"}),
    # `source` is the source name, the first segment of doc_id (these ids have only one).
    (Where((C("source", "eq", "d2"),)), {"d2"}),
    (Where((C("source", "any", ("d1", "d3", "nope")),)), {"d1", "d3"}),
    (Where((C("source", "ne", "d2"),)), {"d1", "d3", "d4"}),
    (Where((C("title", "contains", "guide"),)), {"d1"}),
    (Where((C("title", "eq", "weather"),)), {"d2"}),
    (Where((C("doc_id", "any", ("d1", "d4", "nope")),)), {"d1", "d4"}),
    # Dates: 10:30+08:00 is 02:30 UTC, after d1 (02:00 UTC) and before d2 (03:00 UTC).
    (Where((C("date", "lt", datetime(2024, 1, 1, 10, 30, tzinfo=CST)),)), {"d1", "d4"}),
    (Where((C("date", "ge", "2024-01-01T02:00:00Z"),)), {"d1", "d2", "d3"}),
    (Where((C("date", "le", datetime(2024, 1, 1, 2, 0)),)), {"d1", "d4"}),  # naive = UTC
    (Where((C("date", "gt", datetime(2024, 1, 31, 23, 0, tzinfo=EST)),)), {"d3"}),
    # Extra metadata properties created on demand.
    (Where((C("author", "eq", "Alice"),)), {"d1"}),
    (Where((C("rating", "gt", 4),)), {"d1", "d3"}),
    (Where((C("draft", "eq", True),)), {"d2"}),
    # all_of AND one any_of group.
    (
        Where(
            (C("lang", "eq", "en"),),
            (C("page", "eq", 5), C("author", "eq", WEIRD)),
        ),
        {"d2", "d3"},
    ),
    (Where((C("lang", "eq", "en"), C("page", "lt", 10))), {"d2"}),
    # Literal values: quotes, braces, backslashes, GraphQL syntax.
    (Where((C("author", "eq", WEIRD),)), {"d3"}),
    (Where((C("author", "contains", '"the {chef}" \\'),)), {"d3"}),
    (Where((C("author", "eq", 'say "hi" {x} $y'),)), {"d4"}),
    (Where((C("author", "contains", "} $y"),)), {"d4"}),
    (Where((C("path", "eq", "other/c{1}\\x.txt"),)), {"d3"}),
    (Where((C("path", "contains", "c{1}\\"),)), {"d3"}),
    (Where((C("author", "eq", 'Alice" } OR { "a'),)), set()),
]


#: The entities of the graph contract: Acme (France) supplies Kestrel (Korea), Ada sits on
#: Acme's board, Nimbus has no country, and "Twin" is a name two organizations share.
GRAPH_ENTITIES = [
    Entity(
        "organization",
        "acme",
        "Acme Corporation",
        ("ACME", "艾克米"),
        {"country": "France", "city": "Paris"},
        {"supplier_of": ("kestrel",)},
    ),
    Entity("organization", "kestrel", "Kestrel Motors", (), {"country": "Korea"}),
    Entity("organization", "nimbus", "Nimbus Labs", ("Twin",)),
    Entity("organization", "other", "Other Twin Works", ("Twin",), {"country": "France"}),
    Entity("person", "ada", "Ada Lovelace", (), {}, {"board_member_of": ("acme",)}),
]

#: Raw mentions by document: resolved by name or alias; "Twin" is ambiguous and "Nobody" is
#: unknown, so neither links (the raw names stay filterable).
GRAPH_DOCS: dict[str, list[str]] = {
    "france": ["acme corporation"],
    "korea": ["Kestrel Motors"],
    "nimbus": ["Nimbus Labs", "Twin"],
    "both": ["艾克米", "KESTREL  motors"],
    "nobody": ["Nobody", "Twin"],
    "none": [],
}

GRAPH_CASES: list[tuple[Where, set[str]]] = [
    (Where((C("mentions.country", "eq", "france"),)), {"france", "both"}),
    (Where((C("mentions.country", "any", ["Korea", "Japan"]),)), {"korea", "both"}),
    (Where((C("mentions.city", "eq", "PARIS"),)), {"france", "both"}),
    (Where((C("mentions.name", "eq", "ACME"),)), {"france", "both"}),
    (Where((C("mentions.name", "eq", "Twin"),)), {"nimbus"}),
    (Where((C("mentions.name", "contains", "motor"),)), {"korea", "both"}),
    (Where((C("mentions.id", "eq", "kestrel"),)), {"korea", "both"}),
    (Where((C("mentions.id", "ne", "kestrel"),)), {"france", "nimbus", "both"}),
    (Where((C("mentions.supplier_of.name", "eq", "Kestrel Motors"),)), {"france", "both"}),
    (Where((C("mentions.supplier_of", "eq", "kestrel motors"),)), {"france", "both"}),
    (Where((C("mentions.supplier.country", "eq", "France"),)), {"korea", "both"}),
    (Where((C("mentions.board_member.name", "eq", "Ada Lovelace"),)), {"france", "both"}),
    (
        Where((C("mentions.board_member.board_member_of.supplier_of.id", "eq", "kestrel"),)),
        {"france", "both"},
    ),
    (
        Where((C("mentions.country", "eq", "France"), C("mentions.country", "eq", "Korea"))),
        {"both"},
    ),
    (Where((C("mentions", "eq", "Nobody"),)), {"nobody"}),  # raw names filter as ever
    (
        Where(any_of=(C("mentions.country", "eq", "Korea"), C("lang", "eq", "zh"))),
        {"korea", "both", "none"},
    ),
    (
        Where((C("lang", "eq", "en"),), any_of=(C("mentions.name", "eq", "Nimbus Labs"),)),
        {"nimbus"},
    ),
]

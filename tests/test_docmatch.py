"""--doc resolution: exact beats partial beats fuzzy; ambiguity is an exit-2 error with a list."""

from __future__ import annotations

import pytest

from stitcher.docmatch import DocumentName, match_documents, resolve_document
from stitcher.errors import AmbiguousError, UsageError

DOCS = [
    DocumentName("samples/cities/lyon.md", "Lyon", "samples/cities/lyon.md"),
    DocumentName("samples/cities/lyon.zh.md", "Lyon", "samples/cities/lyon.zh.md"),
    DocumentName("samples/cities/porto.md", "Porto", "samples/cities/porto.md"),
    DocumentName(
        "samples/zh_tea_cultivation.txt", "茶树栽培入门", "samples/zh_tea_cultivation.txt"
    ),
]


def test_exact_title_match_is_unique() -> None:
    assert resolve_document("porto", DOCS).doc_id == "samples/cities/porto.md"


def test_chinese_title_substring() -> None:
    assert resolve_document("茶树", DOCS).doc_id == "samples/zh_tea_cultivation.txt"


def test_misspelling_is_forgiven() -> None:
    assert resolve_document("Portoo", DOCS).title == "Porto"


def test_ambiguous_lists_candidates_and_exits_2() -> None:
    with pytest.raises(AmbiguousError) as info:
        resolve_document("Lyon", DOCS)
    assert info.value.exit_status == 2
    assert "lyon.md" in str(info.value) and "lyon.zh.md" in str(info.value)


def test_doc_id_picks_one_of_the_twins() -> None:
    assert resolve_document("samples/cities/lyon.zh.md", DOCS).doc_id.endswith("zh.md")


def test_nothing_matches() -> None:
    assert match_documents("Reykjavik", DOCS) == []
    with pytest.raises(UsageError, match="no document"):
        resolve_document("Reykjavik", DOCS)

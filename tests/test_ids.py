from __future__ import annotations

import uuid
from itertools import pairwise

import pytest
from hypothesis import given
from hypothesis import strategies as st

from stitcher.chunking import split
from stitcher.errors import UsageError
from stitcher.ids import (
    build_records,
    canonical_collection_name,
    chunk_hash,
    chunk_uuid,
    page_of,
)
from stitcher.models import Chunk, Document, sha256_hex

BASE = ("Docs", "guide/intro.md", "a" * 64, 3)


def test_same_inputs_give_same_id() -> None:
    assert chunk_uuid(*BASE) == chunk_uuid(*BASE)


def test_ids_are_stable_across_releases() -> None:
    # Stored objects are found again by these ids: changing the scheme orphans every collection.
    assert chunk_uuid("Docs", "guide/intro.md", "a" * 64, 3) == str(
        uuid.uuid5(
            uuid.UUID("6f1c3e0a-5b7d-5c2e-9a41-2d8e7f3b9c10"),
            '["Docs", "guide/intro.md", "' + "a" * 64 + '", 3]',
        )
    )


def test_id_is_a_version_5_uuid() -> None:
    parsed = uuid.UUID(chunk_uuid(*BASE))
    assert parsed.version == 5
    assert str(parsed) == chunk_uuid(*BASE)


@pytest.mark.parametrize(
    "changed",
    [
        ("Other", *BASE[1:]),
        (BASE[0], "guide/other.md", *BASE[2:]),
        (*BASE[:2], "b" * 64, BASE[3]),
        (*BASE[:3], 4),
    ],
)
def test_any_changed_value_changes_the_id(changed: tuple[str, str, str, int]) -> None:
    assert chunk_uuid(*changed) != chunk_uuid(*BASE)


def test_values_are_not_simply_concatenated() -> None:
    assert chunk_uuid("Docs", "ab", "c", 0) != chunk_uuid("Docs", "a", "bc", 0)
    assert chunk_uuid("Docs", "a1", "x", 2) != chunk_uuid("Docs", "a", "1x", 2)


@given(
    st.tuples(st.text(max_size=8), st.text(max_size=8), st.integers(0, 3)),
    st.tuples(st.text(max_size=8), st.text(max_size=8), st.integers(0, 3)),
)
def test_distinct_inputs_give_distinct_ids(
    a: tuple[str, str, int], b: tuple[str, str, int]
) -> None:
    if a != b:
        assert chunk_uuid("Docs", *a) != chunk_uuid("Docs", *b)


def test_collection_spelling_is_canonicalised() -> None:
    assert chunk_uuid("docs", *BASE[1:]) == chunk_uuid("Docs", *BASE[1:])


@pytest.mark.parametrize(
    ("name", "canonical"),
    [("docs", "Docs"), ("Docs", "Docs"), ("my_Docs2", "My_Docs2"), ("x", "X")],
)
def test_canonical_collection_name(name: str, canonical: str) -> None:
    assert canonical_collection_name(name) == canonical


@pytest.mark.parametrize("name", ["", "_docs", "2docs", "my-docs", "文档", "has space", "a.b"])
def test_invalid_collection_names_are_refused(name: str) -> None:
    with pytest.raises(UsageError, match="invalid collection name"):
        canonical_collection_name(name)


def test_chunk_hash_is_sha256_of_text() -> None:
    assert chunk_hash("重新编译内核") == sha256_hex("重新编译内核")
    assert chunk_hash("a") != chunk_hash("b")


def make_doc(text: str, **metadata: object) -> Document:
    return Document(doc_id="manual.pdf", source="docs/manual.pdf", text=text, metadata=metadata)


def test_records_form_a_parent_chain() -> None:
    doc = make_doc("我们需要重新编译内核。" * 80 + "The quick brown fox. " * 30, title="手册")
    chunks = split(doc.text)
    records = build_records("docs", doc, chunks)
    assert len(records) == len(chunks) > 2
    assert records[0].parent_id is None
    for before, after in pairwise(records):
        assert after.parent_id == before.id
    assert len({r.id for r in records}) == len(records)
    for i, (record, chunk) in enumerate(zip(records, chunks, strict=True)):
        assert record.id == chunk_uuid("Docs", doc.doc_id, doc.doc_hash, i)
        assert record.chunk_index == i
        assert (record.start, record.end, record.text) == (chunk.start, chunk.end, chunk.text)
        assert record.chunk_hash == chunk_hash(chunk.text)
        assert record.doc_hash == doc.doc_hash
        assert record.doc_id == "manual.pdf"
        assert record.source == "docs/manual.pdf"
        assert record.doc_length == len(doc.text)
        assert record.metadata == {"title": "手册"}
    assert records[-1].end == records[-1].doc_length


def test_records_are_deterministic_and_follow_the_version() -> None:
    doc = make_doc("Some text. " * 60)
    again = build_records("Docs", doc, split(doc.text))
    assert build_records("Docs", doc, split(doc.text)) == again
    changed = make_doc("Some text. " * 60, title="new title")
    assert {r.id for r in build_records("Docs", changed, split(changed.text))}.isdisjoint(
        r.id for r in again
    )


def test_page_comes_from_page_starts() -> None:
    pages = ["第一页的内容。" * 30, "Second page text. " * 20, "第三页。" * 40]
    text = "\n\n".join(pages)
    starts = [0, len(pages[0]) + 2, len(pages[0]) + len(pages[1]) + 4]
    doc = make_doc(text, page_starts=starts, title="t")
    records = build_records("Docs", doc, split(text))
    for record in records:
        expected = sum(1 for s in starts if s <= record.start)
        assert record.metadata["page"] == expected
        assert "page_starts" not in record.metadata
        assert record.metadata["title"] == "t"
    assert {r.metadata["page"] for r in records} == {1, 2, 3}
    assert "page_starts" in doc.metadata  # the document itself is untouched


def test_page_of_boundaries() -> None:
    assert page_of(0, [0, 10, 20]) == 1
    assert page_of(9, [0, 10, 20]) == 1
    assert page_of(10, [0, 10, 20]) == 2
    assert page_of(999, [0, 10, 20]) == 3


def test_no_page_without_page_starts() -> None:
    doc = make_doc("text. " * 10)
    records = build_records("Docs", doc, [Chunk(0, 0, len(doc.text), doc.text)])
    assert "page" not in records[0].metadata


def test_records_metadata_are_independent_copies() -> None:
    doc = make_doc("text. " * 100, tags=["a"])
    records = build_records("Docs", doc, split(doc.text, 50, 10))
    records[0].metadata["extra"] = 1
    assert "extra" not in records[1].metadata
    assert "extra" not in doc.metadata


@pytest.mark.parametrize("parts", [1, 3])
def test_line_is_where_the_chunk_starts_in_text_files(parts: int) -> None:
    text = "".join(f"Line number {n} of the notes.\n" for n in range(1, 80))
    doc = Document(doc_id="notes.txt", source="docs/notes.txt", text=text, metadata={})
    chunks = split(text)
    step = -(-len(chunks) // parts)  # a large document's records are built part by part
    records = [
        record
        for first in range(0, len(chunks), step)
        for record in build_records(
            "Docs", doc, chunks, indices=range(first, min(first + step, len(chunks)))
        )
    ]
    assert len(records) == len(chunks) > 3
    for record in records:
        assert record.metadata["line"] == text.count("\n", 0, record.start) + 1


def test_no_line_for_extracted_formats() -> None:
    for source in ("docs/manual.pdf", "docs/page.HTML", "docs/letter.docx"):
        doc = Document(doc_id=source, source=source, text="text.\nmore.\n", metadata={})
        (record,) = build_records("Docs", doc, split(doc.text))
        assert "line" not in record.metadata

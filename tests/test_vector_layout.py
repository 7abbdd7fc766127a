"""How a collection holds its vectors (stitcher.store.vectors): one vector, or a named vector per
part of a by-script model, the part chosen by the same routing the by-script embedder uses.

The routing and the settings are pure logic; what each store does with the layout (a chunk's
vector under its part's name, a query searching its script's part) runs on the in-memory store
and on the real Weaviate alike.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import pytest

from stitcher.embed import resolve_model
from stitcher.embed.routed import ScriptRoutedEmbedder
from stitcher.models import (
    VECTOR_INDEX_FLAT,
    VECTOR_INDEX_HNSW,
    VECTORS_BY_SCRIPT,
    VECTORS_SINGLE,
    CollectionSettings,
)
from stitcher.store.base import ChunkStore
from stitcher.store.memory import MemoryStore
from stitcher.store.schema import settings_from_description, settings_to_description
from stitcher.store.vectors import describe, vector_name, vector_names
from stitcher.testing.kit import one_chunk

TEXTS = [
    "Install the package with apt-get install foo.",
    "用 dpkg-reconfigure 重新配置软件包",
    "茶树喜欢温暖湿润的气候。",
    "An English sentence with one 中文 word in it, far below the share.",
    "",
    "12345 --- !!!",
    "かなの文章です。",
]


class _Part:
    def __init__(self, name: str) -> None:
        self.name = name
        self.dimension = 4

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        return [[1.0, 0.0, 0.0, 0.0] for _ in texts]

    def embed_query(self, text: str) -> list[float]:
        return [1.0, 0.0, 0.0, 0.0]


@pytest.mark.parametrize("text", TEXTS)
def test_a_text_is_stored_and_searched_in_the_vector_of_the_part_that_embeds_it(text: str) -> None:
    embedder = ScriptRoutedEmbedder("pair", {"latin": _Part("latin"), "han": _Part("han")})
    assert vector_name(VECTORS_BY_SCRIPT, text) == embedder.part_for(text).name
    assert vector_name(VECTORS_SINGLE, text) is None


def test_the_layouts_name_their_vectors() -> None:
    assert vector_names(VECTORS_SINGLE) == ()
    assert vector_names(VECTORS_BY_SCRIPT) == ("latin", "han")
    assert describe(VECTORS_SINGLE, VECTOR_INDEX_FLAT) == "one vector, flat index"
    assert describe(VECTORS_BY_SCRIPT, VECTOR_INDEX_HNSW) == (
        "named vectors latin, han (hnsw index each)"
    )
    with pytest.raises(ValueError, match="unknown vector layout"):
        vector_name("two-towers", "text")


def test_a_by_script_model_makes_named_vectors_and_others_one() -> None:
    assert resolve_model("bilingual").vectors == VECTORS_BY_SCRIPT
    assert resolve_model(None).vectors == VECTORS_SINGLE
    assert resolve_model("multilingual-e5-small").vectors == VECTORS_SINGLE


def test_the_layout_is_recorded_only_when_it_is_not_one_vector() -> None:
    single = CollectionSettings(model="m", dimension=4, chunk_size=10, chunk_overlap=2)
    named = replace(single, vectors=VECTORS_BY_SCRIPT)
    # A collection recorded before named vectors existed reads back as one vector, which it has.
    assert "vectors" not in single.recorded()
    assert named.recorded()["vectors"] == VECTORS_BY_SCRIPT
    for settings in (single, named):
        back = settings_from_description(settings_to_description(settings))
        assert back is not None and back.vectors == settings.vectors
    # A chunk's vector is the same in either layout: writing into the other one is not refused.
    assert single == named and not named.refusals(model="m", chunk_size=10, chunk_overlap=2)


ENGLISH = "Freight trains carried timber and wool to the coast."
CHINESE = "高速列车在两座城市之间往返运行。"


def _two_languages(store: ChunkStore, vectors: str) -> None:
    """A collection of layout `vectors` holding an English and a Chinese chunk whose vectors
    are the same (so only the layout keeps them apart)."""
    store.create(
        CollectionSettings(
            model="test/pair", dimension=4, chunk_size=250, chunk_overlap=50, vectors=vectors
        )
    )
    records = one_chunk("en.txt", ENGLISH) + one_chunk("zh.txt", CHINESE)
    assert store.write(records, [[1.0, 0.0, 0.0, 0.0]] * 2) == []


def _vector_side(store: ChunkStore, query: str) -> set[str]:
    hits = store.hybrid(query, "", [1.0, 0.0, 0.0, 0.0], limit=10, alpha=1.0)
    return {hit.record.doc_id for hit in hits}


def assert_queries_search_their_part(store: ChunkStore, vectors: str) -> None:
    _two_languages(store, vectors)
    if vectors == VECTORS_SINGLE:
        # One index: every chunk is a vector candidate of every query.
        assert _vector_side(store, "trains to the coast") == {"en.txt", "zh.txt"}
        return
    assert _vector_side(store, "trains to the coast") == {"en.txt"}
    assert _vector_side(store, "去外地坐火车") == {"zh.txt"}
    # Each chunk's stored vector comes back as written (vectors are reused and exported).
    assert {r.doc_id: v for r, v in store.records_with_vectors()} == {
        "en.txt": [1.0, 0.0, 0.0, 0.0],
        "zh.txt": [1.0, 0.0, 0.0, 0.0],
    }
    for record in store.fetch([r.id for r, _ in store.records_with_vectors()]):
        found = store.vectors_by_chunk_hash(record.doc_id, [record.chunk_hash])
        assert found == {record.chunk_hash: [1.0, 0.0, 0.0, 0.0]}


@pytest.mark.parametrize("vectors", [VECTORS_SINGLE, VECTORS_BY_SCRIPT])
def test_the_memory_store_searches_the_part_of_the_query(vectors: str) -> None:
    assert_queries_search_their_part(MemoryStore("Layout"), vectors)


@pytest.mark.integration
@pytest.mark.parametrize("vectors", [VECTORS_SINGLE, VECTORS_BY_SCRIPT])
def test_weaviate_searches_the_part_of_the_query(weaviate_client: Any, vectors: str) -> None:
    from stitcher.store.weaviate import WeaviateStore

    name = "Layout" + uuid.uuid4().hex[:10]
    store = WeaviateStore(weaviate_client, name)
    try:
        assert_queries_search_their_part(store, vectors)
        config = weaviate_client.collections.use(name).config.get()
        if vectors == VECTORS_BY_SCRIPT:
            assert set(config.vector_config) == {"latin", "han"}
            objects = weaviate_client.collections.use(name).query.fetch_objects(include_vector=True)
            # Each chunk carries its own part's vector only.
            held = {str(o.properties["doc_id"]): set(o.vector) for o in objects.objects}
            assert held == {"en.txt": {"latin"}, "zh.txt": {"han"}}
        # A fresh store reads the layout from the settings, as a new process does.
        again = WeaviateStore(weaviate_client, name)
        expected = {"en.txt"} if vectors == VECTORS_BY_SCRIPT else {"en.txt", "zh.txt"}
        assert _vector_side(again, "trains to the coast") == expected
    finally:
        store.drop()

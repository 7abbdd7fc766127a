"""The Python API and the LangChain retriever over the in-memory store, no server: a `Stitcher`
given a store and a query embedder runs the same requests as over Weaviate, and the retriever
gets the automatic alpha (issue 34: the logic above the store is tested without a server)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from stitcher.api import Stitcher
from stitcher.config import DEFAULT_MODEL
from stitcher.ingest import IngestOptions, ingest
from stitcher.langchain import StitchedRetriever
from stitcher.request import SearchRequest
from stitcher.store.memory import MemoryStore
from tests.fakes import FakeEmbedder

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
QUERIES = ("how do birds navigate at night?", "豆腐怎么做")


class MiniLMShaped(FakeEmbedder):
    """The fake's vectors under the default model's name: the automatic alpha then treats
    queries as MiniLM reads them (English fully, Chinese not at all)."""

    name = DEFAULT_MODEL


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Stitcher:
    root = tmp_path_factory.mktemp("memory") / "library"
    root.mkdir()
    for name in ("en_bird_migration.txt", "zh_homemade_tofu.md"):
        shutil.copy(SAMPLES / name, root / name)
    shutil.copytree(SAMPLES / "cities", root / "cities")
    store = MemoryStore("Library")
    summary = ingest(
        store,
        [str(root)],
        model_name=DEFAULT_MODEL,
        embedder=MiniLMShaped,
        options=IngestOptions(),
    )
    assert summary.added and not summary.failed
    return Stitcher(collection="Library", store=store, query_embedder=MiniLMShaped())


@pytest.mark.parametrize("query", QUERIES)
def test_the_api_and_the_retriever_run_the_same_request_on_the_memory_store(
    session: Stitcher, query: str
) -> None:
    result = session.run(SearchRequest(query=query, explain=True))
    assert result.passages and result.alpha is not None
    assert "as requested" not in (result.alpha_reason or "")
    documents = StitchedRetriever(stitcher=session).invoke(query)
    assert [
        (d.metadata["doc_id"], d.metadata["start"], d.metadata["score"]) for d in documents
    ] == [(p.doc_id, p.start, p.score) for p in result.passages]
    assert all(d.metadata["source"] == "library" for d in documents)


def test_the_automatic_alpha_differs_by_language_so_the_comparison_can_fail(
    session: Stitcher,
) -> None:
    english = session.run(SearchRequest(query=QUERIES[0], explain=True))
    chinese = session.run(SearchRequest(query=QUERIES[1], explain=True))
    assert chinese.alpha is not None and english.alpha is not None
    assert chinese.alpha < english.alpha
    pinned = StitchedRetriever(stitcher=session, alpha=0.5).invoke(QUERIES[1])
    assert [d.metadata["score"] for d in pinned] != [p.score for p in chinese.passages]


def test_a_given_store_survives_close_and_refresh(session: Stitcher) -> None:
    store = session.store
    session.refresh()
    session.close()
    assert session.store is store
    assert session.stats()["documents"] >= 3

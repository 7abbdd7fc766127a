"""On the real server: a sentence cut across a line wrap and a chunk boundary comes back whole
from a query on either half — ingested by stitcher, in a collection built the seed's way, and in
that collection after `stitcher adopt`.

Two files. In `ragged.txt` a paragraph has a 140-character line followed by a 238-character one:
nothing looks hard-wrapped, so the loader keeps the line break and the chunker cuts there; only
the query-time soft line break rule can join the sentence. In `wrapped.txt` a long sentence is
hard-wrapped at 72 columns: stitcher's loader joins the lines (the chunker then cuts inside the
sentence), while the seed's collection keeps every line break.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from test_seed_layout import langchain_embeddings, make_seed_collection, squeeze

from stitcher.models import Passage
from stitcher.store.weaviate import WeaviateStore

RAGGED = (
    "The Merrow lighthouse stands on a rock two miles off the cape.\n\n"
    "The keeper of the Merrow light, a patient man from the fishing village of Porthallow, "
    "wrote every single passing ship into a ledger bound in\n"
    "green sailcloth, and the entries ran for forty-one winters without a single missing "
    "night. Visitors can still read the final entry, written in a shaky hand, in the harbour "
    "museum today, next to the brass telescope and the foghorn he kept.\n\n"
    "The lamp itself was replaced by an automatic beacon long ago.\n"
)
# Its first part is longer than a heading (stitch.HEADING_MAX_CHARS), which stitching would
# carry into the next sentence anyway.
RAGGED_SENTENCE = (
    "The keeper of the Merrow light, a patient man from the fishing village of Porthallow, "
    "wrote every single passing ship into a ledger bound in\n"
    "green sailcloth, and the entries ran for forty-one winters without a single missing night."
)
RAGGED_HALVES = (
    "keeper of the Merrow light patient man from the fishing village of Porthallow",
    "green sailcloth entries ran for forty-one winters without a single missing night",
)

WRAPPED = """Braising cheap cuts of meat.

Braising suits the tough cuts that a butcher sells cheaply. When the
shoulder has been browned in batches, the onions softened in the fat that
is left, the pan deglazed with cider and every browned scrap scraped up
from the bottom, the meat goes back into the pot with enough stock to
come halfway up its sides, and the covered pot then spends three quiet
hours in a low oven until a fork slides through the thickest piece without
any resistance at all. Let the dish rest before serving it.
"""
WRAPPED_SENTENCE = " ".join(
    WRAPPED.split("Braising suits the tough cuts that a butcher sells cheaply. ")[1]
    .split(" Let the dish")[0]
    .split()
)
WRAPPED_HALVES = (
    "shoulder browned in batches onions softened in the fat deglazed with cider",
    "covered pot spends three quiet hours in a low oven until a fork slides through",
)

CASES = [
    pytest.param(RAGGED_SENTENCE, RAGGED_HALVES[0], id="ragged-first-half"),
    pytest.param(RAGGED_SENTENCE, RAGGED_HALVES[1], id="ragged-second-half"),
    pytest.param(WRAPPED_SENTENCE, WRAPPED_HALVES[0], id="wrapped-first-half"),
    pytest.param(WRAPPED_SENTENCE, WRAPPED_HALVES[1], id="wrapped-second-half"),
]


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("wrapped") / "corpus"
    root.mkdir()
    (root / "ragged.txt").write_text(RAGGED, encoding="utf-8")
    (root / "wrapped.txt").write_text(WRAPPED, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def embeddings() -> Any:
    return langchain_embeddings()


def assert_whole(passages: list[Passage], sentence: str) -> Passage:
    """The passage holding `sentence` (compared without whitespace): whole, never truncated."""
    target = squeeze(sentence)
    found = [p for p in passages if target in squeeze(p.text)]
    assert found, f"no passage holds the whole sentence; got {[p.text for p in passages]!r}"
    assert not found[0].truncated
    return found[0]


def assert_cut_by_chunks(chunk_texts: list[str], sentence: str) -> None:
    """The test's premise: no single stored chunk holds the whole sentence."""
    target = squeeze(sentence)
    assert not any(target in squeeze(text) for text in chunk_texts)


# -- (a) ingested by stitcher --------------------------------------------------------------------


@pytest.fixture(scope="module")
def ingested(weaviate_client: Any, corpus: Path) -> Iterator[Any]:
    from stitcher.embed import document_embedder, resolve_model
    from stitcher.ingest import ingest

    store = WeaviateStore(weaviate_client, "WrappedOurs")
    if weaviate_client.collections.exists("WrappedOurs"):
        weaviate_client.collections.delete("WrappedOurs")
    model = resolve_model(None)
    embedder = document_embedder(model)
    summary = ingest(store, [str(corpus)], model_name=model.name, embedder=lambda: embedder)
    assert summary.failed == {} and len(summary.added) == 2
    yield store
    weaviate_client.collections.delete("WrappedOurs")


def stored_texts(client: Any, name: str) -> list[str]:
    return [str(o.properties["text"]) for o in client.collections.use(name).iterator()]


@pytest.mark.parametrize(("sentence", "query"), CASES)
def test_stitcher_collection(
    weaviate_client: Any, ingested: Any, embeddings: Any, sentence: str, query: str
) -> None:
    from stitcher.search import SearchOptions, search

    assert_cut_by_chunks(stored_texts(weaviate_client, "WrappedOurs"), sentence)
    result = search(ingested, query, embeddings.embed_query, SearchOptions(limit=3))
    passage = assert_whole(result.passages, sentence)
    if sentence == RAGGED_SENTENCE:
        # The loader left the ragged paragraph alone: the line break is in the stored text,
        # and the query-time rule alone joined the sentence across it.
        assert "bound in\ngreen sailcloth" in passage.text
        assert passage.text.startswith("The keeper")


# -- (b) built the seed's way, (c) the same after `stitcher adopt` -------------------------------


@pytest.fixture(scope="module")
def seed_collection(weaviate_client: Any, corpus: Path, embeddings: Any) -> Iterator[str]:
    name = "WrappedTheirs"
    make_seed_collection(weaviate_client, name, corpus, embeddings)
    yield name
    for leftover in (name, name + "_StitcherAdopt"):
        if weaviate_client.collections.exists(leftover):
            weaviate_client.collections.delete(leftover)


@pytest.fixture(scope="module")
def adopted(weaviate_client: Any, corpus: Path, embeddings: Any) -> Iterator[Any]:
    from stitcher.seed_layout import adopt

    name = "WrappedAdopted"
    make_seed_collection(weaviate_client, name, corpus, embeddings)
    adopt(WeaviateStore(weaviate_client, name), root=corpus)
    yield WeaviateStore(weaviate_client, name)
    for leftover in (name, name + "_StitcherAdopt"):
        if weaviate_client.collections.exists(leftover):
            weaviate_client.collections.delete(leftover)


@pytest.mark.parametrize(("sentence", "query"), CASES)
def test_seed_layout_collection(
    weaviate_client: Any, seed_collection: str, embeddings: Any, sentence: str, query: str
) -> None:
    from stitcher.seed_layout import seed_search

    assert_cut_by_chunks(stored_texts(weaviate_client, seed_collection), sentence)
    result = seed_search(
        WeaviateStore(weaviate_client, seed_collection),
        query,
        embeddings.embed_query(query),
        limit=3,
    )
    passage = assert_whole(result.passages, sentence)
    assert "\n" in passage.text  # the seed stores the file's line breaks


@pytest.mark.parametrize(("sentence", "query"), CASES)
def test_adopted_collection(
    weaviate_client: Any, adopted: Any, embeddings: Any, sentence: str, query: str
) -> None:
    from stitcher.search import SearchOptions, search

    assert_cut_by_chunks(stored_texts(weaviate_client, adopted.name), sentence)
    result = search(adopted, query, embeddings.embed_query, SearchOptions(limit=3))
    passage = assert_whole(result.passages, sentence)
    assert "\n" in passage.text  # adopt keeps the stored text as it was

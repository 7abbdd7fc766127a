"""Issue 16, item 8: small things met on the way.

- `stitcher search --queries FILE` closed FILE only when the process ended (ResourceWarning);
- `stitcher adopt --root DIR` refused sources stored as paths relative to DIR;
- on seed-layout collections every query built a new ONNX session, and `took_ms` left the
  embedding out.
"""

from __future__ import annotations

import json
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stitcher.errors import UsageError
from stitcher.seed_layout import doc_id_for_source
from stitcher.store.weaviate import WeaviateStore
from tests.test_exit_codes import run_stitcher, script_environment
from tests.test_seed_layout import CORPUS_FILES, SAMPLES, langchain_embeddings, make_seed_collection

QUERIES = ("how do birds find north", "茶树 修剪", "sync conflicts")


def test_relative_sources_are_resolved_against_the_root(tmp_path: Path) -> None:
    root = tmp_path / "corpus"
    elsewhere = tmp_path / "somewhere" / "else"
    # The seed ran inside the root (`DirectoryLoader(".")`), stitcher runs from elsewhere.
    assert doc_id_for_source("zh/a.txt", root, cwd=elsewhere) == "corpus/zh/a.txt"
    assert doc_id_for_source("./b.md", root, cwd=elsewhere) == "corpus/b.md"
    # What worked before still does: relative to the current directory, or via the root's name.
    assert doc_id_for_source("corpus/zh/a.txt", root, cwd=tmp_path) == "corpus/zh/a.txt"
    assert doc_id_for_source("x/corpus/c.txt", root, cwd=elsewhere) == "corpus/c.txt"
    # Paths that lead out of the root are still refused, absolute or relative.
    for outside in ("/other/place/c.txt", "../c.txt"):
        with pytest.raises(UsageError, match="does not lie under root"):
            doc_id_for_source(outside, root, cwd=elsewhere)


@pytest.fixture(scope="module")
def seed_collection(
    weaviate_client: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    import shutil

    corpus = tmp_path_factory.mktemp("small") / "corpus"
    corpus.mkdir()
    for name in CORPUS_FILES:
        shutil.copy(SAMPLES / name, corpus / name)
    name = "SmallThingsSeed"
    make_seed_collection(weaviate_client, name, corpus, langchain_embeddings())
    yield name
    weaviate_client.collections.delete(name)


def test_adopt_resolves_relative_sources_against_root(weaviate_client: Any, tmp_path: Path) -> None:
    """The seed ran inside the folder (sources "en_bird_migration.txt", ...); adopt runs from
    another directory with --root pointing at the folder."""
    import shutil
    import subprocess

    from langchain_core.documents import Document
    from langchain_text_splitters import RecursiveCharacterTextSplitter
    from langchain_weaviate import WeaviateVectorStore

    from stitcher.store.weaviate import WeaviateStore
    from tests.test_exit_codes import stitcher_script
    from tests.test_seed_layout import build_document_hierarchy

    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for file_name in CORPUS_FILES[:2]:
        shutil.copy(SAMPLES / file_name, corpus / file_name)
    docs = [
        Document(page_content=path.read_text(encoding="utf-8"), metadata={"source": path.name})
        for path in sorted(corpus.iterdir())
    ]
    docs = RecursiveCharacterTextSplitter(chunk_size=250, chunk_overlap=50).split_documents(docs)
    name = "RelativeSeed"
    if weaviate_client.collections.exists(name):
        weaviate_client.collections.delete(name)
    WeaviateVectorStore.from_documents(
        docs, langchain_embeddings(), client=weaviate_client, index_name=name,
        **build_document_hierarchy(docs),
    )  # fmt: skip
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    try:
        done = subprocess.run(
            [str(stitcher_script()), "adopt", "-c", name, "--root", str(corpus)],
            cwd=elsewhere,
            env=script_environment(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, done.stderr
        documents = WeaviateStore(weaviate_client, name).documents()
        assert sorted(documents) == sorted(f"corpus/{f}" for f in CORPUS_FILES[:2])
    finally:
        weaviate_client.collections.delete(name)


def _stitcher_for(server: Any, collection: str) -> Any:
    from stitcher.api import Stitcher

    return Stitcher(server.url, server.api_key(), collection, grpc_port=server.grpc_port)


def test_seed_layout_queries_share_one_onnx_session(
    weaviate_server: Any, seed_collection: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from stitcher.embed import onnx

    opened: list[Path] = []
    real_open = onnx._open_session

    def counting_open(path: Path, threads: int | None = None) -> Any:
        opened.append(path)
        return real_open(path, threads)

    monkeypatch.setattr(onnx, "_open_session", counting_open)
    with _stitcher_for(weaviate_server, seed_collection) as s:
        results = [s.search_result(q) for q in QUERIES]
        retriever = s.as_retriever(k=2)
        documents = [retriever.invoke(q) for q in QUERIES]
    assert all(r.passages for r in results) and all(documents)
    assert len(opened) == 1, opened


def test_seed_layout_took_ms_counts_the_embedding(
    weaviate_client: Any, seed_collection: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fake clock that only the embedding advances: took_ms must include that step."""
    from stitcher.embed import query_embedder, resolve_model
    from stitcher.foreign import seed_search as module

    now = [1000.0]
    monkeypatch.setattr(module, "time", types.SimpleNamespace(perf_counter=lambda: now[0]))
    embedder = query_embedder(resolve_model(None))

    def slow_embedding(text: str) -> list[float]:
        now[0] += 2.5  # seconds
        return embedder.embed_query(text)

    result = module.seed_search(
        WeaviateStore(weaviate_client, seed_collection), QUERIES[0], slow_embedding
    )
    assert result.passages
    assert result.took_ms == pytest.approx(2500.0)


def test_queries_file_is_closed(weaviate_server: Any, seed_collection: str, tmp_path: Path) -> None:
    queries = tmp_path / "queries.txt"
    queries.write_text("\n".join(QUERIES) + "\n", encoding="utf-8")
    env = script_environment(PYTHONWARNINGS="error::ResourceWarning")
    done = run_stitcher(
        "search", "--queries", str(queries), "-c", seed_collection, "-k", "2", env=env
    )
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["query"] for line in lines] == list(QUERIES)
    assert "ResourceWarning" not in done.stderr, done.stderr

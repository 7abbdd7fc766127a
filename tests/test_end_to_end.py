"""The real thing: the CLI, the packaged MiniLM model and the session's Weaviate server. What the
CLI decides by itself runs on the in-memory store: tests/test_cli_on_memory.py."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from stitcher.cli import main

pytestmark = pytest.mark.integration

REPO = Path(__file__).resolve().parent.parent
SAMPLES = REPO / "samples"


def cli_json(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, Any]:
    code = main(list(args))
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip() else None


@pytest.fixture(scope="module")
def samples_collection(weaviate_server: Any) -> str:
    """samples/ ingested once with the real model through the CLI."""
    name = "E2e" + uuid.uuid4().hex[:8]
    code = main(["ingest", str(SAMPLES), "--collection", name, "--json"])
    assert code == 0
    return name


def test_ingest_summary_and_rerun(
    samples_collection: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, summary = cli_json(
        capsys, "ingest", str(SAMPLES), "--collection", samples_collection, "--json"
    )
    assert code == 0
    expected = {
        "added",
        "updated",
        "unchanged",
        "deleted",
        "failed",
        "chunks_written",
        "embedded",
        "seconds",
        "collection",
    }
    assert expected <= set(summary)
    assert summary["embedded"] == 0 and summary["chunks_written"] == 0
    assert summary["added"] == 0 and summary["unchanged"] >= 8


def test_search_json_shape_and_exact_slices(
    samples_collection: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = cli_json(
        capsys,
        "search",
        "修剪",
        "--collection",
        samples_collection,
        "--json",
        "--explain",
        "--limit",
        "3",
    )
    assert code == 0
    assert out["query"] == "修剪" and isinstance(out["took_ms"], float) and out["round_trips"] <= 2
    assert 0 < len(out["results"]) <= 3
    for r in out["results"]:
        assert {
            "text",
            "source",
            "doc_id",
            "score",
            "hit_ids",
            "chunk_ids",
            "start",
            "end",
            "truncated",
            "explain",
        } <= set(r)
        assert set(r["hit_ids"]) <= set(r["chunk_ids"])
        # `source` is the source name, the value `--where source=` takes; `path` is the file.
        source, _, relative = r["doc_id"].partition("/")
        assert r["source"] == source and Path(r["path"]).as_posix().endswith("/" + relative)
    first = out["results"][0]
    assert "修剪" in first["text"]
    code, narrowed = cli_json(
        capsys, "search", "修剪", "-c", samples_collection, "--json", "--where",
        f"source={first['source']}",
    )  # fmt: skip
    assert code == 0 and narrowed["results"]
    assert {r["source"] for r in narrowed["results"]} == {first["source"]}


def test_the_demos_chinese_search_keeps_unrelated_documents_low_and_says_why(
    samples_collection: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """`make demo`'s "茶树 修剪": MiniLM cannot read it, so at alpha 0.5 its vector side
    ranked a tofu recipe third at ~0.5, silently. The keyword side now leads and --explain
    names the reason; documents about other things stay far below."""
    code, out = cli_json(
        capsys, "search", "茶树 修剪", "--collection", samples_collection, "--json", "--explain"
    )
    assert code == 0
    assert out["alpha"] < 0.5 and "cannot read" in out["alpha_reason"]
    sources = [Path(r["path"]).name for r in out["results"]]
    assert sources[:3] == ["zh_tea_cultivation.txt"] * 3, sources
    unrelated = [r["score"] for r in out["results"] if "tea" not in r["path"]]
    assert all(score < 0.25 for score in unrelated), out["results"]


def test_langchain_reads_our_chunks(samples_collection: str, weaviate_client: Any) -> None:
    from langchain_weaviate import WeaviateVectorStore

    from stitcher.embed import resolve_model
    from stitcher.embed.st import SentenceTransformerEmbedder

    embedder = SentenceTransformerEmbedder(resolve_model(None))

    class Embeddings:
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return embedder.embed_documents(texts)

        def embed_query(self, text: str) -> list[float]:
            return embedder.embed_query(text)

    store = WeaviateVectorStore(
        client=weaviate_client,
        index_name=samples_collection,
        text_key="text",
        embedding=Embeddings(),  # type: ignore[arg-type]
    )
    docs = store.similarity_search("bird migration over the sea", k=3)
    assert docs and all(d.page_content for d in docs)
    assert any("migrat" in d.page_content.lower() for d in docs)


def test_search_in_a_fresh_process_does_not_import_torch(samples_collection: str) -> None:
    code = (
        "import sys, json\nfrom stitcher.cli import main\n"
        f"rc = main(['search', 'tea harvest', '--collection', '{samples_collection}', '--json'])\n"
        "print('HEAVY=' + json.dumps([m for m in ('torch', 'sentence_transformers', 'transformers')"
        " if m in sys.modules]), file=sys.stderr)\nsys.exit(rc)"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env=os.environ.copy(),
    )
    assert proc.returncode == 0, proc.stderr
    assert "HEAVY=[]" in proc.stderr
    assert json.loads(proc.stdout)["results"]


def _count(client: Any, name: str) -> int:
    return int(client.collections.get(name).aggregate.over_all(total_count=True).total_count or 0)


def _count_now(client: Any, name: str) -> int:
    """The count while another process creates the collection: its shard may not be ready yet
    ("tried to browse non-existing index"), which counts as empty."""
    from weaviate.exceptions import WeaviateBaseError

    try:
        return _count(client, name)
    except WeaviateBaseError:
        return 0


def _ids_and_texts(client: Any, name: str) -> set[tuple[str, str]]:
    return {
        (str(o.uuid), o.properties["text"])
        for o in client.collections.get(name).iterator(return_properties=["text"])
    }


def test_sigkill_half_way_then_rerun_equals_clean_ingest(
    weaviate_client: Any, tmp_path: Path
) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    from tests.test_ingest import EN, ZH

    for i in range(12):
        (corpus / f"doc{i:02d}.txt").write_text((ZH if i % 2 else EN) * 6 + f" 第{i}篇。", "utf-8")
    name = "Kill" + uuid.uuid4().hex[:8]
    cmd = [
        sys.executable,
        "-m",
        "stitcher",
        "ingest",
        str(corpus),
        "--batch-size",
        "8",
        "--collection",
        name,
    ]
    proc = subprocess.Popen(
        cmd, env=os.environ.copy(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline and proc.poll() is None:
        if weaviate_client.collections.exists(name) and _count_now(weaviate_client, name) >= 10:
            break
        time.sleep(0.2)
    assert proc.poll() is None, "ingest finished before it could be killed: make the corpus bigger"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    partial = _count(weaviate_client, name)
    subprocess.run(cmd, check=True, env=os.environ.copy(), capture_output=True)
    repaired = _ids_and_texts(weaviate_client, name)

    weaviate_client.collections.delete(name)
    subprocess.run(cmd, check=True, env=os.environ.copy(), capture_output=True)
    clean = _ids_and_texts(weaviate_client, name)
    assert 0 < partial < len(clean)
    assert repaired == clean
    weaviate_client.collections.delete(name)

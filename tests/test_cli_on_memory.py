"""Commands through `main` on the in-memory store (stitcher.testing.cli_on_stores, the fake
embedder, no server): what the CLI itself decides — JSON lines for --queries, the message for a
missing collection, a query model other than the collection's, passages as exact slices. What
is about Weaviate (its hybrid search, stored offsets, the real model) stays in
tests/test_end_to_end.py."""

from __future__ import annotations

import io
import json
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stitcher.cli import main
from stitcher.ingest import ingest
from stitcher.store.memory import MemoryStore
from stitcher.testing import cli_on_stores
from tests.fakes import FakeEmbedder

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("on-memory") / "samples"
    root.mkdir()
    for name in ("en_bird_migration.txt", "zh_tea_cultivation.txt", "zh_homemade_tofu.md"):
        shutil.copy(SAMPLES / name, root / name)
    store = MemoryStore("Samples")
    summary = ingest(store, [str(root)], model_name=FakeEmbedder.name, embedder=FakeEmbedder)
    assert len(summary.added) == 3 and not summary.failed
    return {"root": root, "store": store}


@pytest.fixture
def collection(samples: dict[str, Any]) -> Iterator[dict[str, Any]]:
    store = samples["store"]
    with cli_on_stores(lambda name, tenant: store.sibling(name), FakeEmbedder()):
        yield samples


def test_search_json_is_exact_slices_of_the_loaded_text(
    collection: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["search", "修剪", "-c", "Samples", "--json", "--explain", "--limit", "3"])
    out = json.loads(capsys.readouterr().out)
    assert code == 0 and out["query"] == "修剪" and 0 < len(out["results"]) <= 3
    for result in out["results"]:
        assert set(result["hit_ids"]) <= set(result["chunk_ids"]) and "explain" in result
        # The passage is the text its chunks hold at its offsets, overlaps once.
        characters: dict[int, str] = {}
        for chunk in collection["store"].fetch(result["chunk_ids"]):
            characters.update(zip(range(chunk.start, chunk.end), chunk.text, strict=True))
        spanned = range(result["start"], result["end"])
        assert "".join(characters[i] for i in spanned) == result["text"]
    source = out["results"][0]["source"]
    code = main(["search", "修剪", "-c", "Samples", "--json", "--where", f"source={source}"])
    narrowed = json.loads(capsys.readouterr().out)
    assert code == 0 and {r["source"] for r in narrowed["results"]} == {source}


def test_queries_from_stdin_print_json_lines(
    collection: dict[str, Any], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("茶树 修剪\n\nhow do birds navigate\n"))
    code = main(["search", "--queries", "-", "--collection", "Samples", "--limit", "2"])
    lines = capsys.readouterr().out.splitlines()
    assert code == 0 and len(lines) == 2
    first, second = (json.loads(line) for line in lines)
    assert first["query"] == "茶树 修剪" and second["query"] == "how do birds navigate"
    assert 0 < len(first["results"]) <= 2 and 0 < len(second["results"]) <= 2


def test_missing_collection_lists_existing(
    collection: dict[str, Any], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["search", "x", "--collection", "NoSuchThing"]) == 1
    err = capsys.readouterr().err
    assert "NoSuchThing" in err and "Samples" in err and err.count("\n") == 1


def test_other_model_is_refused(
    collection: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["search", "tea", "--collection", "Samples", "--model", str(tmp_path)])
    assert code in (1, 2)
    assert "model" in capsys.readouterr().err.lower()

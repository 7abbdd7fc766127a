"""A document whose chunks were not all written is listed incomplete until an ingest completes it.

The in-memory half stops a run inside a large document by raising from the store; the fault half
kills the installed script (SIGKILL, STITCHER_FAULT_POINT) mid-document against the real server
and reads `stats` and `doctor` through the script too.
"""

from __future__ import annotations

import json
import signal
import subprocess
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from stitcher.ingest import IngestOptions, ingest
from stitcher.models import ChunkRecord, WriteFailure
from stitcher.store.memory import MemoryStore
from tests.fakes import FakeEmbedder

#: Sentences enough for about 60 chunks of 250 characters: many groups of 8 at batch size 1.
LARGE = " ".join(f"Sentence number {i} of the long manual says something new." for i in range(300))
OPTIONS = IngestOptions(batch_size=1, source="docs")


class Stopped(BaseException):
    """The run stops here (as a kill would): nothing in ingest catches it."""


class StopsAtWrite(MemoryStore):
    """A memory store whose `stop_at`-th write never returns."""

    stop_at = 0
    writes = 0

    def write(
        self, records: Sequence[ChunkRecord], vectors: Sequence[list[float]]
    ) -> list[WriteFailure]:
        self.writes += 1
        if self.writes == self.stop_at:
            raise Stopped
        return super().write(records, vectors)


def _corpus(root: Path) -> Path:
    docs = root / "docs"
    docs.mkdir()
    (docs / "large.txt").write_text(LARGE, encoding="utf-8")
    (docs / "small.txt").write_text("A small note. It fits in one chunk.", encoding="utf-8")
    return docs


def _ingest(store: MemoryStore, docs: Path) -> Any:
    return ingest(
        store, [str(docs)], model_name=FakeEmbedder.name, embedder=FakeEmbedder, options=OPTIONS
    )


def test_a_run_stopped_inside_a_document_leaves_it_incomplete_and_the_next_completes_it(
    tmp_path: Path,
) -> None:
    docs = _corpus(tmp_path)
    store = StopsAtWrite("Incomplete")
    store.stop_at = 4  # three groups of the large document are stored
    with pytest.raises(Stopped):
        _ingest(store, docs)
    listed = store.documents()
    assert not listed["docs/large.txt"].complete
    stored_before = listed["docs/large.txt"].chunk_count
    assert stored_before > 0

    store.stop_at = 0
    summary = _ingest(store, docs)
    assert summary.exit_status == 0
    # Not skipped as unchanged although nothing about the file changed.
    assert "docs/large.txt" in summary.added + summary.updated
    listed = store.documents()
    assert all(doc.complete for doc in listed.values())
    assert listed["docs/large.txt"].chunk_count > stored_before
    again = _ingest(store, docs)
    assert sorted(again.unchanged) == ["docs/large.txt", "docs/small.txt"]


def test_the_last_write_missing_is_enough_to_be_incomplete(tmp_path: Path) -> None:
    """Every chunk stored, the run stopped before the incomplete record went: its chunk count
    matches, and it is still rewritten (and the record goes)."""
    docs = _corpus(tmp_path)
    store = MemoryStore("Incomplete")
    finished = store.finish_documents
    store.finish_documents = lambda doc_ids: None  # type: ignore[method-assign]
    _ingest(store, docs)
    assert not store.documents()["docs/large.txt"].complete
    store.finish_documents = finished  # type: ignore[method-assign]
    summary = _ingest(store, docs)
    assert sorted(summary.added + summary.updated) == ["docs/large.txt", "docs/small.txt"]
    assert all(doc.complete for doc in store.documents().values())


# --- the installed script, killed mid-document, against the real server ----------------------


@pytest.mark.faults
def test_sigkill_mid_document_then_stats_doctor_and_a_rerun(
    weaviate_server: Any, weaviate_client: Any, tmp_path: Path
) -> None:
    from tests.test_faults import STITCHER, delete, stitcher_env

    name = "FaultIncomplete"
    delete(weaviate_client, name)
    docs = _corpus(tmp_path)
    connection = ["--url", weaviate_server.url, "--api-key", weaviate_server.api_key(),
                  "--grpc-port", str(weaviate_server.grpc_port)]  # fmt: skip

    def stitcher(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(STITCHER), *args, *connection],
            env=stitcher_env(**env),
            capture_output=True,
            text=True,
            timeout=600,
        )

    def ingest_args() -> list[str]:
        return ["ingest", str(docs), "--batch-size", "1", "-c", name]

    def stats() -> dict[str, Any]:
        done = stitcher("stats", "-c", name, "--json")
        assert done.returncode == 0, done.stderr
        return dict(json.loads(done.stdout))

    try:
        killed = stitcher(*ingest_args(), STITCHER_FAULT_POINT="write:4")
        assert killed.returncode == -signal.SIGKILL, killed.stderr
        half = stats()["incomplete"]
        assert list(half) == ["docs/large.txt"] and half["docs/large.txt"] > 0
        doctor = stitcher("doctor", "-c", name)
        assert "1 incomplete" in doctor.stdout + doctor.stderr
        assert "docs/large.txt" in doctor.stdout + doctor.stderr

        rerun = stitcher(*ingest_args())
        assert rerun.returncode == 0, rerun.stderr
        after = stats()
        assert after["incomplete"] == {}
        # Every chunk once: one object per chunk index, none missing, none twice.
        indexes = Counter(
            (str(o.properties["doc_id"]), int(o.properties["chunk_index"]))
            for o in weaviate_client.collections.use(name).iterator(
                return_properties=["doc_id", "chunk_index"]
            )
        )
        large = sorted(i for doc_id, i in indexes if doc_id == "docs/large.txt")
        assert large == list(range(len(large))) and len(large) > half["docs/large.txt"]
        assert set(indexes.values()) == {1}
        assert after["chunks"] == sum(indexes.values())
        found = stitcher("search", "Sentence number 299 of the long manual", "-c", name, "--json")
        assert found.returncode == 0, found.stderr
        assert "Sentence number 299" in found.stdout
    finally:
        delete(weaviate_client, name)

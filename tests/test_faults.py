"""Fault injection against the real server: kill the ingest, kill or stop the server, fill its
disk — and check that a rerun always converges to exactly what a clean ingest stores.

The ingest runs as the installed `stitcher` script in a subprocess (PYTHONPATH = this checkout)
and is stopped at chosen moments by the test-only hook stitcher.faults.fault_point
(STITCHER_FAULT_POINT=phase:n[:stop]). Reruns and the clean reference run in this process with
the same packaged model, batch size 1 on both sides, so the vectors compare to 1e-6.

Run alone with `pytest -m faults`.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from stitcher import server
from stitcher.config import ConnectionSettings
from stitcher.ingest import IngestOptions, IngestSummary, ingest
from tests.test_ingest import EN, ZH

# Tests that use the server are marked `integration` by tests/conftest.py.
pytestmark = pytest.mark.faults

WORKTREE = Path(__file__).resolve().parent.parent
STITCHER = Path(sys.executable).with_name("stitcher")
#: batch_size 1: 8 chunks a group, many moments to hit. The two versions live in two folders
#: named alike, so both name their source: one source moving between them, not two colliding.
OPTIONS = IngestOptions(batch_size=1, prune=True, source="docs")
SEED = 20261203
KILLS = 20
#: Guards against a hung subprocess, not a performance threshold.
PATIENCE = 300

PROPERTIES = ["doc_id", "doc_hash", "chunk_index", "start", "end", "text", "parent_id"]


# --- corpus: version 1, then version 2 with edits, additions and removals ---------------------


def _text(i: int, extra: str = "") -> str:
    base = (ZH if i % 2 else EN) * 2
    return f"{base}\n\n第{i}篇，第 {i} 号文档。Document number {i}.{extra}"


def _write_corpus(root: Path, version: int) -> Path:
    docs = root / "docs"  # the same folder name in both versions: the same doc ids
    if docs.exists():
        shutil.rmtree(docs)
    docs.mkdir(parents=True)
    for i in range(10):
        if version == 2 and i in (8, 9):
            continue  # vanished: pruned
        extra = " A paragraph added in the second version, which changes the hash." * 2
        (docs / f"d{i:02d}.txt").write_text(
            _text(i, extra if version == 2 and i in (1, 3, 5) else ""), encoding="utf-8"
        )
    if version == 2:
        for i in (10, 11, 12):
            (docs / f"d{i:02d}.txt").write_text(_text(i), encoding="utf-8")
    return docs


@pytest.fixture(scope="module")
def corpora(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("fault-corpora")
    return _write_corpus(root / "v1", 1), _write_corpus(root / "v2", 2)


# --- one model, memoised: reruns cost no embeddings for texts seen before --------------------


class MemoEmbedder:
    """The packaged model at batch size 1 (as the subprocess runs it), remembering vectors."""

    def __init__(self) -> None:
        from stitcher.embed import document_embedder, resolve_model

        self.model = resolve_model(None)
        self._inner = document_embedder(self.model, batch_size=1)
        self._seen: dict[str, np.ndarray] = {}

    @property
    def dimension(self) -> int:
        return self._inner.dimension

    def embed_documents(self, texts: Sequence[str]) -> np.ndarray:
        new = [t for t in dict.fromkeys(texts) if t not in self._seen]
        if new:
            for text, vector in zip(new, self._inner.embed_array(new), strict=True):
                self._seen[text] = vector
        return np.stack([self._seen[t] for t in texts])


@pytest.fixture(scope="module")
def embedder() -> MemoEmbedder:
    from stitcher.embed import export_onnx, onnx_export_dir

    memo = MemoEmbedder()
    if onnx_export_dir(memo.model) is None:
        export_onnx(memo.model)  # else the first subprocess would export it (and be slow)
    return memo


def run_in_process(store: Any, docs: Path, embedder: MemoEmbedder) -> IngestSummary:
    return ingest(
        store,
        [str(docs)],
        model_name=embedder.model.name,
        embedder=lambda: embedder,
        options=OPTIONS,
    )


# --- what a collection holds, for comparison ---------------------------------------------------


def snapshot(client: Any, name: str) -> dict[str, tuple[Any, ...]]:
    """Every chunk by id: its properties and its vector."""
    if not client.collections.exists(name):
        return {}
    found = {}
    for obj in client.collections.use(name).iterator(
        include_vector=True, return_properties=PROPERTIES
    ):
        props = obj.properties
        vector = obj.vector["default"] if isinstance(obj.vector, dict) else obj.vector
        found[str(obj.uuid)] = (
            *(str(props[p]) if p == "parent_id" and props[p] else props[p] for p in PROPERTIES),
            np.asarray(vector, dtype=np.float32),
        )
    return found


def assert_same(actual: dict[str, tuple[Any, ...]], expected: dict[str, tuple[Any, ...]]) -> None:
    assert sorted(actual) == sorted(expected)
    for key, want in expected.items():
        got = actual[key]
        assert got[:-1] == want[:-1], key
        np.testing.assert_allclose(got[-1], want[-1], atol=1e-6, rtol=0)


def delete(client: Any, name: str) -> None:
    if client.collections.exists(name):
        client.collections.delete(name)


def stitcher_env(**extra: str) -> dict[str, str]:
    env = os.environ.copy()
    env["PYTHONPATH"] = str(WORKTREE)
    env["HF_HUB_OFFLINE"] = "1"
    env["TRANSFORMERS_OFFLINE"] = "1"
    env["COLUMNS"] = "1000"  # an error line is not wrapped: the tests count lines
    env.update(extra)
    return env


def ingest_command(docs: Path, name: str, *extra: str) -> list[str]:
    return [str(STITCHER), "ingest", str(docs), "--prune", "--batch-size", "1", "--source", "docs",
            "--collection", name, *extra]  # fmt: skip


# --- one document fails, the others go on (memory store, fake embedder) -----------------------


def _isolation_corpus(root: Path) -> Path:
    docs = root / "docs"
    docs.mkdir(parents=True)
    (docs / "good1.txt").write_text(EN * 2, encoding="utf-8")
    (docs / "good2.txt").write_text(ZH * 2, encoding="utf-8")
    (docs / "poison.txt").write_text(EN + " The first version. ", encoding="utf-8")
    return docs


def _run_memory(store: Any, docs: Path, embedder: Any = None) -> IngestSummary:
    from tests.fakes import FakeEmbedder

    embedder = embedder or FakeEmbedder()
    return ingest(store, [str(docs)], model_name=FakeEmbedder.name, embedder=lambda: embedder)


def _chunks_of(store: Any, doc_id: str) -> set[str]:
    from stitcher.models import SpanRequest

    stored = store.documents().get(doc_id)
    if stored is None:
        return set()
    requests = [SpanRequest(doc_id, h, 0, 10**9) for h in stored.doc_hashes]
    return {r.id for r in store.fetch_spans(requests)}


@pytest.fixture
def poisoned(tmp_path: Path) -> tuple[Any, Path, set[str]]:
    """A memory store with the corpus ingested, then poison.txt changed (its new version will
    fail); returns the store, the corpus and poison.txt's stored chunk ids."""
    from stitcher.store.memory import MemoryStore

    store = MemoryStore("Isolation")
    docs = _isolation_corpus(tmp_path)
    assert _run_memory(store, docs).exit_status == 0
    before = _chunks_of(store, "docs/poison.txt")
    assert before
    (docs / "poison.txt").write_text(EN + " POISON in the second version. ", encoding="utf-8")
    (docs / "good3.txt").write_text(EN + ZH, encoding="utf-8")
    return store, docs, before


def _assert_isolated(summary: IngestSummary, store: Any, before: set[str], words: str) -> None:
    assert summary.exit_status == 1
    assert list(summary.failed) == ["docs/poison.txt"]
    assert words in summary.failed["docs/poison.txt"]
    assert summary.added == ["docs/good3.txt"] and summary.chunks_written > 0
    assert _chunks_of(store, "docs/good3.txt")
    # Nothing of the document already stored is harmed: the old version is whole.
    assert _chunks_of(store, "docs/poison.txt") == before


def test_a_splitter_failure_fails_that_document_only(
    poisoned: tuple[Any, Path, set[str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    import stitcher.ingest.documents

    real = stitcher.ingest.documents.split_spans

    def fussy(text: str, *args: Any) -> Any:
        if "POISON" in text:
            raise AssertionError("splitter invariant violated")
        return real(text, *args)

    monkeypatch.setattr(stitcher.ingest.documents, "split_spans", fussy)
    store, docs, before = poisoned
    summary = _run_memory(store, docs)
    _assert_isolated(summary, store, before, "AssertionError: splitter invariant violated")


def test_an_embedder_failure_fails_that_document_only(
    poisoned: tuple[Any, Path, set[str]],
) -> None:
    from tests.fakes import FakeEmbedder

    class Fussy(FakeEmbedder):
        def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
            if any("POISON" in t for t in texts):
                raise RuntimeError("CUDA error: device-side assert triggered")
            return super().embed_documents(texts)

    store, docs, before = poisoned
    summary = _run_memory(store, docs, Fussy())
    _assert_isolated(summary, store, before, "embedding")
    assert "CUDA error" in summary.failed["docs/poison.txt"]


def _pdf_with_lone_surrogate(lines: Sequence[str]) -> bytes:
    """A real PDF whose font's ToUnicode map turns the letter A into U+D800, a lone surrogate:
    what a broken text layer gives pypdf (it decodes with surrogatepass)."""
    cmap = (
        b"/CIDInit /ProcSet findresource begin 12 dict begin begincmap "
        b"/CMapName /Broken def /CMapType 2 def 1 begincodespacerange <00> <FF> "
        b"endcodespacerange 1 beginbfchar <41> <D800> endbfchar endcmap "
        b"CMapName currentdict /CMapResource defineresource pop end end"
    )
    ops = " ".join(f"({line}) Tj 0 -16 Td" for line in lines)
    content = f"BT /F1 12 Tf 72 720 Td {ops} ET".encode()
    objects = {
        1: b"<< /Type /Catalog /Pages 2 0 R >>",
        2: b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        3: b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
        b"/Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>",
        4: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /ToUnicode 6 0 R >>",
        5: b"<< /Length %d >>\nstream\n" % len(content) + content + b"\nendstream",
        6: b"<< /Length %d >>\nstream\n" % len(cmap) + cmap + b"\nendstream",
    }
    out = bytearray(b"%PDF-1.4\n")
    offsets = {}
    for number in sorted(objects):
        offsets[number] = len(out)
        out += f"{number} 0 obj\n".encode() + objects[number] + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 7\n0000000000 65535 f \n"
    for number in range(1, 7):
        out += f"{offsets[number]:010d} 00000 n \n".encode()
    out += f"trailer\n<< /Size 7 /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n".encode()
    return bytes(out)


def test_a_pdf_with_a_lone_surrogate_fails_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from stitcher.loaders import formats
    from stitcher.store.memory import MemoryStore

    # PDFium (the PDF text reader since loader rules 3) drops a code its text layer maps to a
    # lone surrogate; pypdf kept it. The text layer is replaced by pypdf-like text so that the
    # ingest's own guard is still tested.
    monkeypatch.setattr(
        formats, "_pdfium_pages", lambda data: ["The keeper wrote \ud800 letter every day."]
    )
    store = MemoryStore("Surrogate")
    docs = _isolation_corpus(tmp_path)
    (docs / "broken.pdf").write_bytes(
        _pdf_with_lone_surrogate(["The keeper wrote A letter every day.", "Nobody answered."])
    )
    summary = _run_memory(store, docs)
    assert summary.exit_status == 1 and list(summary.failed) == ["docs/broken.pdf"]
    assert "lone surrogate" in summary.failed["docs/broken.pdf"]
    assert sorted(summary.added) == ["docs/good1.txt", "docs/good2.txt", "docs/poison.txt"]
    assert "docs/broken.pdf" not in store.documents()


def test_a_collection_retyped_by_hand_is_one_line_naming_the_property(
    weaviate_client: Any, tmp_path: Path
) -> None:
    """Someone recreated the collection with `start` as text: every write is refused."""
    from weaviate.classes.config import Configure, DataType, Property

    from stitcher.faults import SchemaChanged
    from stitcher.models import CollectionSettings
    from stitcher.store.schema import settings_to_description
    from stitcher.store.weaviate import WeaviateStore
    from tests.fakes import FakeEmbedder

    name = "FaultRetyped"
    delete(weaviate_client, name)
    fake = FakeEmbedder()
    settings = CollectionSettings(model=fake.name, dimension=fake.dimension, chunk_size=250,
                                  chunk_overlap=50)  # fmt: skip
    weaviate_client.collections.create(
        name,
        description=settings_to_description(settings),
        properties=[Property(name="start", data_type=DataType.TEXT)],
        vector_config=Configure.Vectors.self_provided(),
    )
    store = WeaviateStore(weaviate_client, name)
    try:
        with pytest.raises(SchemaChanged) as raised:
            _run_memory(store, _isolation_corpus(tmp_path))
        message = str(raised.value)
        assert "\n" not in message and raised.value.exit_status == 1
        assert message.startswith(f"collection {name!r} at Weaviate at ")
        assert "start" in message and "0 document(s) stored" in message
    finally:
        delete(weaviate_client, name)


# --- SIGKILL of the ingest at 20 moments over every phase -------------------------------------


#: The collection the kills run on.
KILLED = "FaultKill"


@pytest.fixture(scope="module")
def clean(
    weaviate_client: Any, corpora: tuple[Path, Path], embedder: MemoEmbedder
) -> tuple[dict[str, tuple[Any, ...]], Counter[str]]:
    """The reference: v1 then v2 without faults; and how often each fault point is reached."""
    from stitcher.store.weaviate import WeaviateStore

    v1, v2 = corpora
    delete(weaviate_client, KILLED)
    run_in_process(WeaviateStore(weaviate_client, KILLED), v1, embedder)
    reached: Counter[str] = Counter()
    with pytest.MonkeyPatch.context() as patch:
        # Loading and pruning reach their points in the run, writing and embedding in the pipeline.
        for module in ("stitcher.ingest.run", "stitcher.ingest.pipeline"):
            patch.setattr(f"{module}.fault_point", lambda phase: reached.update([phase]))
        summary = run_in_process(WeaviateStore(weaviate_client, KILLED), v2, embedder)
    assert summary.exit_status == 0 and len(summary.deleted) == 2 and len(summary.updated) == 3
    reference = snapshot(weaviate_client, KILLED)
    delete(weaviate_client, KILLED)
    return reference, reached


def kill_moments(reached: Counter[str]) -> list[str]:
    """KILLS moments drawn with a fixed seed, every phase represented."""
    everything = [f"{phase}:{n}" for phase, count in reached.items() for n in range(1, count + 1)]
    rng = random.Random(SEED)
    chosen = {f"{phase}:{rng.randint(1, count)}" for phase, count in reached.items()}
    rest = sorted(set(everything) - chosen)
    chosen.update(rng.sample(rest, min(len(rest), KILLS - len(chosen))))
    return sorted(chosen)


def test_sigkill_at_twenty_moments_then_rerun_equals_clean_ingest(
    weaviate_client: Any,
    corpora: tuple[Path, Path],
    embedder: MemoEmbedder,
    clean: tuple[dict[str, tuple[Any, ...]], Counter[str]],
) -> None:
    from stitcher.store.weaviate import WeaviateStore

    v1, v2 = corpora
    reference, reached = clean
    assert set(reached) == {"read", "embed", "write", "delete", "prune"}, reached
    moments = kill_moments(reached)
    assert len(moments) >= KILLS
    for moment in moments:
        started = time.monotonic()
        delete(weaviate_client, KILLED)
        run_in_process(WeaviateStore(weaviate_client, KILLED), v1, embedder)
        proc = subprocess.run(
            ingest_command(v2, KILLED),
            env=stitcher_env(STITCHER_FAULT_POINT=moment),
            capture_output=True,
            text=True,
            timeout=PATIENCE,
        )
        assert proc.returncode == -signal.SIGKILL, (moment, proc.returncode, proc.stderr)
        # Ids hash the content: other ids are another state.
        partial = set(snapshot(weaviate_client, KILLED))
        assert partial != set(reference), f"{moment}: nothing was left to do"
        summary = run_in_process(WeaviateStore(weaviate_client, KILLED), v2, embedder)
        assert summary.exit_status == 0, (moment, summary.failed)
        assert_same(snapshot(weaviate_client, KILLED), reference)
        print(f"killed at {moment}, rerun converged ({time.monotonic() - started:.0f} s)")
    delete(weaviate_client, KILLED)


# --- the server killed, stopped, or out of disk, on a server of the test's own ----------------


@pytest.fixture
def own_server(tmp_path: Path, weaviate_server: Any) -> Iterator[Path]:
    """A home for a dedicated server (started by the test); stopped afterwards."""
    home = tmp_path / "server-home"
    home.mkdir()
    try:
        yield home
    finally:
        server.stop(home)


def _connect(info: server.ServerInfo) -> Any:
    from stitcher.store.weaviate.connection import connect

    return connect(
        ConnectionSettings(url=info.url, api_key=info.api_key(), grpc_port=info.grpc_port)
    )


def _url_args(info: server.ServerInfo) -> list[str]:
    return ["--url", info.url, "--api-key", info.api_key(), "--grpc-port", str(info.grpc_port)]


def _wait_until_stopped(proc: subprocess.Popen[str]) -> None:
    """Until the ingest has sent itself SIGSTOP at its fault point."""
    deadline = time.monotonic() + PATIENCE
    while time.monotonic() < deadline:
        assert proc.poll() is None, f"ingest ended before its fault point: {proc.returncode}"
        state = Path(f"/proc/{proc.pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        if state == "T":
            return
        time.sleep(0.1)
    proc.kill()
    pytest.fail("the ingest never reached its fault point")


def _ingest_stopped_at_its_second_write(
    info: server.ServerInfo, docs: Path
) -> subprocess.Popen[str]:
    """An ingest of `docs` into SERVER_FAULT that has stopped itself (SIGSTOP) before its
    second write: the test does something to the server, then sends SIGCONT."""
    proc = subprocess.Popen(
        ingest_command(docs, SERVER_FAULT, *_url_args(info)),
        env=stitcher_env(STITCHER_FAULT_POINT="write:2:stop"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _wait_until_stopped(proc)
    return proc


def _rerun_and_compare(
    info: server.ServerInfo, name: str, docs: Path, embedder: MemoEmbedder, reference: Any
) -> None:
    from stitcher.store.weaviate import WeaviateStore

    client = _connect(info)
    try:
        summary = run_in_process(WeaviateStore(client, name), docs, embedder)
        assert summary.exit_status == 0, summary.failed
        assert_same(snapshot(client, name), reference)
    finally:
        client.close()


@pytest.fixture(scope="module")
def fresh_reference(
    weaviate_client: Any, corpora: tuple[Path, Path], embedder: MemoEmbedder
) -> dict[str, tuple[Any, ...]]:
    """v2 ingested cleanly into an empty collection named SERVER_FAULT."""
    from stitcher.store.weaviate import WeaviateStore

    delete(weaviate_client, SERVER_FAULT)
    run_in_process(WeaviateStore(weaviate_client, SERVER_FAULT), corpora[1], embedder)
    reference = snapshot(weaviate_client, SERVER_FAULT)
    delete(weaviate_client, SERVER_FAULT)
    return reference


SERVER_FAULT = "FaultServer"


def _one_error_line(stderr: str) -> str:
    errors = [line for line in stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, stderr
    return errors[0]


def test_server_killed_mid_ingest_is_one_line_and_a_rerun_converges(
    own_server: Path,
    corpora: tuple[Path, Path],
    embedder: MemoEmbedder,
    fresh_reference: dict[str, tuple[Any, ...]],
) -> None:
    info = server.start(own_server, timeout=120)
    proc = _ingest_stopped_at_its_second_write(info, corpora[1])
    os.kill(info.pid, signal.SIGKILL)
    proc.send_signal(signal.SIGCONT)
    _out, err = proc.communicate(timeout=PATIENCE)
    assert proc.returncode == 1, err
    line = _one_error_line(err)
    assert f"lost the connection to Weaviate at {info.url} while" in line, line
    assert "document(s) stored" in line and "run again to finish" in line, line
    assert "unexpected" not in err and "Traceback" not in err

    restarted = server.start(own_server, timeout=120)
    _rerun_and_compare(restarted, SERVER_FAULT, corpora[1], embedder, fresh_reference)


def test_server_stopped_for_thirty_seconds_then_resumed(
    own_server: Path,
    corpora: tuple[Path, Path],
    embedder: MemoEmbedder,
    fresh_reference: dict[str, tuple[Any, ...]],
) -> None:
    info = server.start(own_server, timeout=120)
    proc = _ingest_stopped_at_its_second_write(info, corpora[1])
    os.kill(info.pid, signal.SIGSTOP)  # the server hangs: requests time out, nothing refuses
    try:
        proc.send_signal(signal.SIGCONT)
        time.sleep(30)
    finally:
        os.kill(info.pid, signal.SIGCONT)
    _out, err = proc.communicate(timeout=PATIENCE)
    # Either it rode out the pause, or it failed cleanly with one line naming the server.
    assert proc.returncode in (0, 1), err
    if proc.returncode == 1:
        assert info.url in _one_error_line(err)
    assert "unexpected" not in err and "Traceback" not in err
    _rerun_and_compare(info, SERVER_FAULT, corpora[1], embedder, fresh_reference)


def test_disk_full_is_one_line_and_a_rerun_converges_after_freeing_space(
    own_server: Path,
    corpora: tuple[Path, Path],
    embedder: MemoEmbedder,
    fresh_reference: dict[str, tuple[Any, ...]],
) -> None:
    if os.geteuid() != 0:
        pytest.xfail("mounting a small tmpfs for the server's data needs root")
    data = own_server / "data"
    data.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(data)], check=True)
    filler = data / "filler"
    try:
        info = server.start(own_server, timeout=120)
        proc = _ingest_stopped_at_its_second_write(info, corpora[1])
        # Fill the disk completely while the ingest waits at its second write.
        subprocess.run(
            ["dd", "if=/dev/zero", f"of={filler}", "bs=1M", "count=100"], capture_output=True
        )
        proc.send_signal(signal.SIGCONT)
        _out, err = proc.communicate(timeout=PATIENCE)
        assert proc.returncode == 1, err
        line = _one_error_line(err)
        assert f"Weaviate at {info.url} refuses writes" in line, line
        assert "disk full" in line and "free disk space on the server and restart it" in line
        assert "unexpected" not in err and "Traceback" not in err

        # What the message says to do.
        filler.unlink()
        server.stop(own_server)
        restarted = server.start(own_server, timeout=120)
        _rerun_and_compare(restarted, SERVER_FAULT, corpora[1], embedder, fresh_reference)
    finally:
        server.stop(own_server)
        _unmount(data)


def _unmount(path: Path) -> None:
    for _ in range(300):  # the server's files close a moment after it exits
        if subprocess.run(["umount", str(path)], capture_output=True).returncode == 0:
            return
        time.sleep(0.1)
    pytest.fail(f"could not unmount {path}")

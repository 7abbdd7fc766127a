"""Shared helpers of the ingest and search benchmarks (not part of the package).

- a temporary Weaviate started with `stitcher.server.start(home=tmpdir)` and stopped at the end;
- the Debian corpus (built with bench/corpus.py when missing) and a seeded subset of it;
- phase timers that also record what the rest of the machine did meanwhile (CPU of this
  process, of the Weaviate server and of every other process; load average), because the
  benchmark machine is shared with other jobs;
- the seed's way (seed 003): LangChain's RecursiveCharacterTextSplitter(250, 50) with default
  separators, uuid4 ids, a parent_id chain and WeaviateVectorStore.from_documents, embedding
  with stitcher's own model through a LangChain Embeddings wrapper.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
DEFAULT_CORPUS = Path("/tmp/stitcher-corpus")

#: Corpus groups by language (bench/corpus.py layout). Traditional Chinese is left out: the
#: simplified groups hold the same man pages.
ZH_GROUPS = ("zh/man-zh_CN", "zh/handbook-zh-CN")
EN_GROUPS = ("en/handbook-en-US", "en/python-3.11")

#: The seed's sentence terminators, verbatim (it lists the half-width ? twice, never ？).
SEED_TERMINATORS = (".", "?", "!", "。", "?", "！")


def setup_environment() -> None:
    """Offline model loading and an importable `stitcher` when run as `python bench/x.py`."""
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))


def log(message: str) -> None:
    """Progress on stderr with a timestamp."""
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# Server
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BenchServer:
    """A running temporary Weaviate: where it is and how to reach it."""

    home: Path
    url: str
    grpc_port: int
    pid: int
    version: str
    api_key: str = field(repr=False)


@contextmanager
def temp_server() -> Iterator[BenchServer]:
    """Start a Weaviate of its own in a temporary home; stop it and delete the home at the end.

    STITCHER_HOME points at the same temporary directory meanwhile, so ingest locks and anything
    else stitcher keeps under its home never touch the user's local server.
    """
    from stitcher import server

    tmp = Path(tempfile.mkdtemp(prefix="stitcher-bench-"))
    home = tmp / "home"
    previous_home = os.environ.get("STITCHER_HOME")
    os.environ["STITCHER_HOME"] = str(home)
    started = time.perf_counter()
    info = server.start(home=home, timeout=120)
    took = time.perf_counter() - started
    log(f"Weaviate {info.version} pid {info.pid} at {info.url} ({took:.1f}s)")
    try:
        yield BenchServer(
            home=home,
            url=info.url,
            grpc_port=info.grpc_port,
            pid=info.pid,
            version=info.version,
            api_key=info.api_key(),
        )
    finally:
        server.stop(home=home)
        if previous_home is None:
            os.environ.pop("STITCHER_HOME", None)
        else:
            os.environ["STITCHER_HOME"] = previous_home
        shutil.rmtree(tmp, ignore_errors=True)
        log("Weaviate stopped")


def cli_environment(bench: BenchServer, pycache_prefix: Path | None = None) -> dict[str, str]:
    """Environment for a fresh `stitcher` process against the bench server.

    The key goes through WEAVIATE_API_KEY, not argv. With `pycache_prefix`, Python may write
    and reuse bytecode under that directory (this machine sets PYTHONDONTWRITEBYTECODE=1 and
    the venv holds no .pyc files, so by default every fresh process compiles every module it
    imports; a normal pip install compiles them once at install time).
    """
    env = {**os.environ, "WEAVIATE_API_KEY": bench.api_key}
    if pycache_prefix is not None:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = str(pycache_prefix)
    return env


def stitcher_exe() -> Path:
    """The project's `stitcher` command."""
    return REPO / ".venv" / "bin" / "stitcher"


def connect(bench: BenchServer) -> Any:
    """A weaviate client for the bench server (through stitcher's own connect)."""
    from stitcher.config import ConnectionSettings
    from stitcher.store.weaviate.connection import connect as stitcher_connect

    return stitcher_connect(ConnectionSettings(bench.url, bench.api_key, bench.grpc_port))


# ---------------------------------------------------------------------------------------------
# Corpus
# ---------------------------------------------------------------------------------------------


def ensure_corpus(corpus: Path) -> dict[str, Any]:
    """The corpus manifest; builds the corpus with bench/corpus.py (no download) when missing."""
    manifest_path = corpus / "manifest.json"
    groups = ZH_GROUPS + EN_GROUPS
    if not manifest_path.is_file() or not all((corpus / g).is_dir() for g in groups):
        log(f"building the corpus at {corpus} with bench/corpus.py")
        sys.path.insert(0, str(REPO / "bench"))
        import corpus as corpus_builder

        code = corpus_builder.main(["--out", str(corpus)])
        if code != 0:
            raise SystemExit(
                f"could not build the corpus at {corpus}; see bench/README.md "
                "(first time: python bench/corpus.py --fetch --out DIR)"
            )
    manifest: dict[str, Any] = json.loads(manifest_path.read_text(encoding="utf-8"))
    return manifest


@dataclass
class LoadedDoc:
    """One selected document as stitcher loads and chunks it."""

    group: str
    relative: str  # path below the corpus root, e.g. zh/man-zh_CN/man1/ls.1.txt
    path: Path
    text: str  # stitcher's loaded (normalised) text
    chunks: list[Any]  # stitcher.models.Chunk

    @property
    def lang(self) -> str:
        return self.group.split("/", 1)[0]


def select_documents(
    corpus: Path,
    budgets: dict[str, int],
    *,
    seed: int = 20261202,
    max_doc_chunks: int = 60,
    chunk_size: int = 250,
    chunk_overlap: int = 50,
) -> list[LoadedDoc]:
    """Random whole documents of each group until the group's chunk budget is reached.

    Documents are loaded and split exactly as `stitcher ingest` does (stitcher.loaders +
    stitcher.chunking.split). Documents with more than `max_doc_chunks` chunks are skipped so
    the subset spans many documents, not a few huge ones.
    """
    from stitcher.chunking import split
    from stitcher.loaders import discover, load

    rng = random.Random(seed)
    chosen: list[LoadedDoc] = []
    for group, budget in budgets.items():
        if budget <= 0:
            continue
        found = discover([str(corpus / group)])
        files = sorted(found.files, key=lambda f: f.doc_id)
        rng.shuffle(files)
        total = 0
        for src in files:
            if total >= budget:
                break
            doc = load(src)
            chunks = split(doc.text, chunk_size, chunk_overlap)
            if len(chunks) < 2 or len(chunks) > max_doc_chunks:
                continue
            if total + len(chunks) > budget * 1.05 and total > 0:
                continue
            relative = src.path.resolve().relative_to(corpus.resolve()).as_posix()
            chosen.append(LoadedDoc(group, relative, src.path, doc.text, chunks))
            total += len(chunks)
    return chosen


def materialise(docs: Sequence[LoadedDoc], target: Path) -> Path:
    """Copy the selected files below `target`, keeping their corpus-relative paths."""
    for doc in docs:
        destination = target / doc.relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(doc.path, destination)
    return target


def corpus_description(docs: Sequence[LoadedDoc]) -> dict[str, dict[str, int]]:
    """Per group: documents, chunks and characters of a selection."""
    out: dict[str, dict[str, int]] = {}
    for doc in docs:
        row = out.setdefault(doc.group, {"documents": 0, "chunks": 0, "chars": 0})
        row["documents"] += 1
        row["chunks"] += len(doc.chunks)
        row["chars"] += len(doc.text)
    return out


# ---------------------------------------------------------------------------------------------
# Timing with the machine's load recorded
# ---------------------------------------------------------------------------------------------


def _clock_ticks() -> int:
    return int(os.sysconf("SC_CLK_TCK"))


def _process_cpu(pid: int) -> float:
    """CPU seconds (user + system) a process has used, from /proc; 0 if it is gone."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / _clock_ticks()


def _machine_busy_cpu() -> float:
    """CPU seconds all processes have used since boot (busy = total - idle - iowait)."""
    first = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    values = [int(v) for v in first[:8]]
    idle = values[3] + values[4]
    return (sum(values) - idle) / _clock_ticks()


@dataclass
class PhaseStats:
    """What one timed phase cost, and what the rest of the machine did meanwhile."""

    name: str
    wall_s: float = 0.0
    own_cpu_s: float = 0.0
    server_cpu_s: float = 0.0
    other_cpu_s: float = 0.0
    load_start: float = 0.0
    load_end: float = 0.0

    @property
    def other_cores(self) -> float:
        """Average number of cores other processes kept busy during the phase."""
        return self.other_cpu_s / self.wall_s if self.wall_s else 0.0

    def to_json(self) -> dict[str, float | str]:
        return {
            "name": self.name,
            "wall_s": round(self.wall_s, 3),
            "own_cpu_s": round(self.own_cpu_s, 2),
            "server_cpu_s": round(self.server_cpu_s, 2),
            "other_cpu_s": round(self.other_cpu_s, 2),
            "other_cores": round(self.other_cores, 2),
            "load_start": self.load_start,
            "load_end": self.load_end,
        }


@contextmanager
def phase(name: str, server_pid: int | None, record: list[PhaseStats]) -> Iterator[PhaseStats]:
    """Time a block: wall clock, this process's CPU, the server's CPU and everybody else's."""
    stats = PhaseStats(name, load_start=round(os.getloadavg()[0], 2))
    own0, srv0, busy0 = time.process_time(), _server_cpu(server_pid), _machine_busy_cpu()
    t0 = time.perf_counter()
    try:
        yield stats
    finally:
        stats.wall_s = time.perf_counter() - t0
        stats.own_cpu_s = time.process_time() - own0
        stats.server_cpu_s = _server_cpu(server_pid) - srv0
        busy = _machine_busy_cpu() - busy0
        stats.other_cpu_s = max(0.0, busy - stats.own_cpu_s - stats.server_cpu_s)
        stats.load_end = round(os.getloadavg()[0], 2)
        record.append(stats)
        log(
            f"{name}: {stats.wall_s:.2f}s wall, own CPU {stats.own_cpu_s:.1f}s, server CPU "
            f"{stats.server_cpu_s:.1f}s, other processes {stats.other_cores:.2f} cores"
        )


def _server_cpu(pid: int | None) -> float:
    return _process_cpu(pid) if pid else 0.0


def percentile(values: Sequence[float], pct: float) -> float:
    """Nearest-rank percentile (pct in 0..100); NaN for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = max(1, min(len(ordered), round(pct / 100 * len(ordered) + 0.5)))
    return ordered[rank - 1]


def machine_info() -> dict[str, Any]:
    """CPU model and count, memory, Python and library versions (for the report)."""
    import platform

    cpu_model = ""
    for line in Path("/proc/cpuinfo").read_text().splitlines():
        if line.startswith("model name"):
            cpu_model = line.split(":", 1)[1].strip()
            break
    mem_kb = 0
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemTotal"):
            mem_kb = int(line.split()[1])
    versions: dict[str, str] = {}
    from importlib.metadata import PackageNotFoundError, version

    for package in (
        "torch",
        "sentence-transformers",
        "onnxruntime",
        "weaviate-client",
        "langchain-weaviate",
        "langchain-text-splitters",
    ):
        try:
            versions[package] = version(package)
        except PackageNotFoundError:
            versions[package] = "missing"
    return {
        "cpus": os.cpu_count(),
        "cpu_model": cpu_model,
        "mem_gb": round(mem_kb / 1e6, 1),
        "python": platform.python_version(),
        "versions": versions,
        "started": time.strftime("%Y-%m-%d %H:%M:%S"),
        "load_at_start": [round(v, 2) for v in os.getloadavg()],
    }


def cell(value: object) -> str:
    """A value as a table cell: "–" for none, floats to three places."""
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.3f}"
    return str(value)


def recall_summary(recalls: Sequence[float]) -> dict[str, float]:
    """How close an approximate top-k came to the exact one, over many queries."""
    import numpy as np

    return {
        "recall_mean": round(float(np.mean(recalls)), 3),
        "recall_min": round(float(np.min(recalls)), 3),
        "share_below_1": round(float(np.mean([r < 1 for r in recalls])), 3),
        "share_below_half": round(float(np.mean([r < 0.5 for r in recalls])), 3),
    }


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A GitHub markdown table."""
    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def write_json(path: Path | None, data: dict[str, Any]) -> None:
    """Write the results as JSON when --json was given."""
    if path is not None:
        path.write_text(json.dumps(data, indent=2, ensure_ascii=False, default=str))
        log(f"results written to {path}")


# ---------------------------------------------------------------------------------------------
# The seed's way (seed 003)
# ---------------------------------------------------------------------------------------------


def langchain_embeddings(embedder: Any) -> Any:
    """A LangChain `Embeddings` backed by a stitcher embedder (same model, same batch size)."""
    from langchain_core.embeddings import Embeddings

    class StitcherEmbeddings(Embeddings):
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return embedder.embed_documents(texts)  # type: ignore[no-any-return,unused-ignore]

        def embed_query(self, text: str) -> list[float]:
            return embedder.embed_query(text)  # type: ignore[no-any-return,unused-ignore]

    return StitcherEmbeddings()


def seed_split(paths: Sequence[Path], root: Path) -> list[Any]:
    """Seed 003's documents: each file's text, RecursiveCharacterTextSplitter(250, 50) with its
    default separators, `source` metadata."""
    from langchain_core.documents import Document
    from langchain_text_splitters import RecursiveCharacterTextSplitter

    splitter = RecursiveCharacterTextSplitter(chunk_size=250, chunk_overlap=50)
    docs = [
        Document(
            page_content=p.read_text(encoding="utf-8"),
            metadata={"source": str(p.relative_to(root))},
        )
        for p in paths
    ]
    return splitter.split_documents(docs)


def build_document_hierarchy(docs: Sequence[Any]) -> dict[str, list[str]]:
    """Seed 003's `build_document_hierarchy`, verbatim in behaviour: uuid4 ids and a parent_id
    chain through all chunks of all documents in list order."""
    from uuid import uuid4

    from weaviate.util import get_valid_uuid

    parent_id = None
    kwargs: dict[str, list[str]] = {"uuids": []}
    for doc in docs:
        _id = get_valid_uuid(uuid4())
        kwargs["uuids"].append(_id)
        doc.metadata.setdefault("parent_id", parent_id)
        parent_id = _id
    return kwargs


def seed_ingest(
    client: Any, paths: Sequence[Path], root: Path, embeddings: Any, index_name: str
) -> int:
    """The seed's whole ingest (split, chain, from_documents); returns the number of chunks.

    langchain-weaviate logs failed objects instead of raising, so the stored count is checked.
    """
    from langchain_weaviate import WeaviateVectorStore

    docs = seed_split(paths, root)
    kwargs = build_document_hierarchy(docs)
    WeaviateVectorStore.from_documents(
        docs, embeddings, client=client, index_name=index_name, **kwargs
    )
    return len(docs)


def count_objects(client: Any, name: str) -> int:
    """Objects in a collection."""
    return int(client.collections.use(name).aggregate.over_all(total_count=True).total_count or 0)

"""Measure BM25 keyword search on real Chinese text with five ways of tokenizing it.

Designs (each a collection holding the same chunks, BM25 only, no vectors):

    gse_ch        server-side Chinese segmentation (`tokenization=gse_ch`, needs
                  ENABLE_TOKENIZER_GSE_CH=true and, on a go-installed binary, gse's dictionaries)
    word          Weaviate's default; a run of Han characters between punctuation is one token
    jieba         client-side: stitcher.segment.keyword_text (rjieba search mode) into a
                  `whitespace` property, queries through stitcher.segment.query_keyword_text
    jieba-precise the same with rjieba's precise mode (`rjieba.cut`), to show why search mode
    trigram       `tokenization=trigram`

Query sets: 2-4 character Chinese words sampled from rjieba's precise segmentation of random
chunks (`jieba-words`), the same sampled from gse_ch's segmentation through the server's tokenize
endpoint (`gse-words`), so each segmenter gets its own vocabulary once, and Latin words of 4+
letters from the same chunks (`latin-words`). Stop words, words in fewer than 2 chunks and words
in more than 5% of them are left out. A query counts as found when one of the top 10 hits
contains the word (Chinese: as a substring; Latin: as a whole word), a check that depends on no
segmenter.

Standalone: starts its own Weaviate (127.0.0.1, free ports, telemetry off, random API key because
gRPC listens on all interfaces) in a temporary directory and stops it at the end.

    python bench/corpus.py --out /tmp/stitcher-corpus --lang zh
    python bench/zh_keyword.py --corpus /tmp/stitcher-corpus
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import secrets
import shlex
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import unicodedata
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

WEAVIATE_VERSION = "1.38.11"
BINARY_CANDIDATES = (
    Path.home() / ".cache" / "stitcher" / "weaviate" / WEAVIATE_VERSION / "weaviate-server",
    Path.home() / "go" / "bin" / "weaviate-server",
)
GSE_MODULE = "github.com/go-ego/gse@v0.80.3"

CHUNK_SIZE = 250
CHUNK_OVERLAP = 50
MIN_HAN_PER_CHUNK = 50
TOP_K = 10

_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_ALL_HAN = re.compile(r"^[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+$")

# Function words and generic verbs that jieba returns as words but nobody searches for.
STOP_WORDS = frozenset(
    """
    一个 一些 一种 一样 一般 一起 也是 也不 于是 从而 他们 以下 以上 以及 任何 但是 你们 使用 例如
    其他 其中 具有 可以 可能 只是 只有 因为 因此 在于 如下 如何 如果 如此 它们 对于 就是 已经 并且
    并不 当前 我们 或者 所以 所有 指定 是否 有些 没有 然后 然而 由于 而且 而是 能够 自己 至少 虽然
    要求 这个 这些 这样 这里 这种 进行 还是 那么 那些 都是 需要 默认 以便 之后 之前 此时 不是 不能
    不会 通过 同时 这是 个人 之间 部分 包括 相同 时候 情况 所示 下面 上面 其它 即使 来说 此外 以后
    """.split()  # noqa: SIM905  (a 100-word list literal is harder to read)
)

PROBE_TEXTS = (
    "重新编译内核后，使用软件包管理系统安装北京大学的软件。",
    "用 apt-get install Python3.11 安装 Wi-Fi 驱动：ｅｘａｍｐｌｅ.conf 第2章",
)

DESIGNS = ("gse_ch", "word", "jieba", "jieba-precise", "trigram")


class BenchError(Exception):
    """The benchmark cannot run (missing corpus, binary or server failure)."""


# ---------------------------------------------------------------------------------------------
# Corpus → chunks → queries
# ---------------------------------------------------------------------------------------------


def fixed_windows(text: str, size: int = CHUNK_SIZE, overlap: int = CHUNK_OVERLAP) -> Iterator[str]:
    """Yield windows of `size` characters starting every `size - overlap` characters."""
    step = size - overlap
    for start in range(0, max(len(text) - overlap, 1), step):
        yield text[start : start + size]


def load_chunks(corpus: Path, groups: list[str], count: int, rng: random.Random) -> list[str]:
    """Sample `count` Chinese chunks (at least MIN_HAN_PER_CHUNK Han characters) from the corpus."""
    candidates: list[str] = []
    for group in groups:
        directory = corpus / "zh" / group
        if not directory.is_dir():
            raise BenchError(
                f"{directory} not found: build the corpus first with "
                f"`python bench/corpus.py --out {corpus} --lang zh`"
            )
        for path in sorted(directory.rglob("*.txt")):
            text = path.read_text(encoding="utf-8")
            candidates.extend(
                chunk
                for chunk in fixed_windows(text)
                if len(_HAN.findall(chunk)) >= MIN_HAN_PER_CHUNK
            )
    if len(candidates) < count:
        raise BenchError(f"only {len(candidates)} Chinese chunks in {corpus}; asked for {count}")
    return rng.sample(candidates, count)


_LATIN_WORD = re.compile(r"[A-Za-z]{4,}")
LATIN_STOP_WORDS = frozenset(
    {"this", "that", "with", "from", "have", "will", "been", "were", "they", "them", "then"}
)


def contains(chunk: str, query: str) -> bool:
    """Does the chunk contain the query word? Han: as a substring; Latin: as a whole word."""
    if _ALL_HAN.match(query):
        return query in chunk
    return re.search(rf"(?<![a-z0-9]){re.escape(query)}(?![a-z0-9])", chunk.lower()) is not None


def sample_latin_queries(chunks: list[str], count: int, rng: random.Random) -> list[str]:
    """Pick `count` Latin words (4+ letters, lower-cased) that occur in 2 to 5% of the chunks.

    The Chinese manuals are full of commands, options and English paragraphs; keyword search
    over the same property has to keep working for them.
    """
    max_df = max(10, len(chunks) // 20)
    candidates = sorted(
        {
            w.lower()
            for c in rng.sample(chunks, min(len(chunks), 600))
            for w in _LATIN_WORD.findall(c)
        }
        - LATIN_STOP_WORDS
    )
    eligible = [w for w in candidates if 2 <= sum(contains(c, w) for c in chunks) <= max_df]
    return rng.sample(eligible, min(count, len(eligible)))


def sample_queries(
    chunks: list[str], count: int, rng: random.Random, segment: Callable[[str], list[str]]
) -> list[str]:
    """Pick `count` distinct 2-4 character words as `segment` sees them in random chunks.

    Stop words, words in fewer than 2 chunks and words in more than 5% of the chunks are left
    out; the rest is stratified by length (about 50% two, 30% three, 20% four characters).
    """
    seen: set[str] = set()
    by_length: dict[int, list[str]] = {2: [], 3: [], 4: []}
    max_df = max(10, len(chunks) // 20)
    for chunk in rng.sample(chunks, min(len(chunks), 600)):
        for word in segment(chunk):
            if (
                word in seen
                or word in STOP_WORDS
                or not 2 <= len(word) <= 4
                or not _ALL_HAN.match(word)
            ):
                continue
            seen.add(word)
            df = sum(word in c for c in chunks)
            if 2 <= df <= max_df:
                by_length[len(word)].append(word)
    quotas = {4: count // 5, 3: count * 3 // 10}
    picked: list[str] = []
    shortfall = 0
    for length in (4, 3):  # longer words are rarer: what they lack goes to the next length
        pool = by_length[length]
        take = min(len(pool), quotas[length] + shortfall)
        shortfall = quotas[length] + shortfall - take
        picked.extend(rng.sample(pool, take))
    pool = by_length[2]
    picked.extend(rng.sample(pool, min(len(pool), count - len(picked))))
    return picked[:count]


# ---------------------------------------------------------------------------------------------
# The server
# ---------------------------------------------------------------------------------------------


def find_binary(explicit: Path | None) -> Path:
    """The weaviate-server to run: --binary, else the stitcher cache, else ~/go/bin."""
    candidates = (explicit,) if explicit else BINARY_CANDIDATES
    for candidate in candidates:
        if candidate and candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate
    raise BenchError(
        f"no weaviate-server binary at {', '.join(str(c) for c in candidates)}; build it with "
        f"`go install github.com/weaviate/weaviate/cmd/weaviate-server@v{WEAVIATE_VERSION}` "
        "or pass --binary"
    )


def free_port(taken: set[int]) -> int:
    """A loopback port the OS reports free and that this run has not handed out yet."""
    while True:
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
        if port not in taken and port + 1 not in taken:
            taken.add(port)
            return port


def free_port_pair(taken: set[int]) -> int:
    """A port whose successor is free too (raft uses RAFT_PORT and RAFT_PORT + 1)."""
    while True:
        port = free_port(taken)
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port + 1))
            except OSError:
                continue
        taken.add(port + 1)
        return port


@dataclass
class Server:
    """A running bench server: its ports, API key, process and log file."""

    http_port: int
    grpc_port: int
    api_key: str
    process: subprocess.Popen[bytes]
    log: Path

    def request(self, method: str, path: str, body: object | None = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(
            f"http://127.0.0.1:{self.http_port}{path}",
            data=data,
            method=method,
            headers={"Authorization": f"Bearer {self.api_key}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=30) as response:
            return json.loads(response.read() or b"null")


@contextmanager
def weaviate_server(binary: Path, workdir: Path, hide: Path | None = None) -> Iterator[Server]:
    """Run one Weaviate node on loopback with a random API key; kill its process group on exit.

    `hide`: a directory to cover with an empty tmpfs in a private mount namespace (needs root
    and `unshare`), to see how the server behaves when gse's dictionaries are gone.
    """
    taken: set[int] = set()
    http_port, grpc_port = free_port(taken), free_port(taken)
    gossip, data_port = free_port(taken), free_port(taken)
    raft = free_port_pair(taken)
    api_key = secrets.token_urlsafe(24)
    env = {
        **os.environ,
        "PERSISTENCE_DATA_PATH": str(workdir / "data"),
        "DEFAULT_VECTORIZER_MODULE": "none",
        "API_BASED_MODULES_DISABLED": "true",
        "DISABLE_TELEMETRY": "true",
        "GO_PROFILING_DISABLE": "true",
        "ENABLE_TOKENIZER_GSE_CH": "true",
        "CLUSTER_HOSTNAME": "bench",
        "CLUSTER_IN_LOCALHOST": "true",
        "CLUSTER_BIND_ADDR": "127.0.0.1",
        "CLUSTER_ADVERTISE_ADDR": "127.0.0.1",
        "CLUSTER_GOSSIP_BIND_PORT": str(gossip),
        "CLUSTER_DATA_BIND_PORT": str(data_port),
        "GRPC_PORT": str(grpc_port),
        "RAFT_PORT": str(raft),
        "RAFT_INTERNAL_RPC_PORT": str(raft + 1),
        "RAFT_BOOTSTRAP_EXPECT": "1",
        "RAFT_JOIN": f"bench:{raft}",
        "AUTHENTICATION_ANONYMOUS_ACCESS_ENABLED": "false",
        "AUTHENTICATION_APIKEY_ENABLED": "true",
        "AUTHENTICATION_APIKEY_ALLOWED_KEYS": api_key,
        "AUTHENTICATION_APIKEY_USERS": "bench",
        "QUERY_DEFAULTS_LIMIT": "25",
        "LOG_LEVEL": "warning",
    }
    log = workdir / "weaviate.log"
    with log.open("wb") as log_file:
        command = [
            str(binary),
            "--scheme",
            "http",
            "--host",
            "127.0.0.1",
            "--port",
            str(http_port),
            "--read-timeout=600s",
            "--write-timeout=600s",
        ]
        if hide is not None:
            command = [
                "unshare",
                "-m",
                "sh",
                "-c",
                'mount -t tmpfs none "$0" && exec "$@"',
                str(hide),
                *command,
            ]
        process = subprocess.Popen(
            command,
            cwd=workdir,
            env=env,
            stdout=log_file,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # own process group, so we can stop everything it started
        )
    server = Server(http_port, grpc_port, api_key, process, log)
    try:
        _wait_for_leader(server)
        yield server
    finally:
        _stop(process)


def _wait_for_leader(server: Server, timeout: float = 90.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            tail = server.log.read_text(errors="replace")[-1500:]
            raise BenchError(f"weaviate-server exited with {server.process.returncode}:\n{tail}")
        try:
            stats = server.request("GET", "/v1/cluster/statistics")
            if any(node.get("leaderId") for node in stats.get("statistics", [])):
                return
        except (urllib.error.URLError, ConnectionError, TimeoutError, json.JSONDecodeError):
            pass
        time.sleep(0.3)
    raise BenchError(f"weaviate-server not ready after {timeout:.0f}s; log: {server.log}")


def _stop(process: subprocess.Popen[bytes]) -> None:
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait(timeout=10)


# ---------------------------------------------------------------------------------------------
# Designs
# ---------------------------------------------------------------------------------------------


@dataclass
class Design:
    """One way of indexing and querying Chinese text for BM25."""

    name: str
    collection: str
    tokenization: str  # of the searched property
    search_property: str
    # Client-side transformation of chunk text into the searched property (None: raw text).
    index_text: Callable[[str], str] | None = None
    query_text: Callable[[str], str] = field(default=lambda q: q)


def designs(segmenter_note: list[str]) -> dict[str, Design]:
    """All designs by name; appends to `segmenter_note` which client-side segmenter is used."""
    import rjieba

    index_text: Callable[[str], str]
    query_text: Callable[[str], str]
    try:
        from stitcher.segment import keyword_text, query_keyword_text

        index_text, query_text = keyword_text, query_keyword_text
        segmenter_note.append("stitcher.segment.keyword_text / query_keyword_text")
    except ImportError:

        def search_mode(text: str) -> str:
            return " ".join(t for t in rjieba.cut_for_search(text.lower()) if t.strip())

        index_text = query_text = search_mode
        segmenter_note.append("rjieba.cut_for_search directly (stitcher.segment not importable)")

    def precise(text: str) -> str:
        # Same normalisation and Latin handling as stitcher.segment, only the Han mode differs,
        # so this row isolates search mode vs precise mode.
        try:
            from stitcher import segment
        except ImportError:
            return " ".join(t for t in rjieba.cut(text.lower()) if t.strip())
        normalised = unicodedata.normalize("NFKC", text).casefold()
        tokens: list[str] = []
        for match in segment._TOKEN_RE.finditer(normalised):
            han = match.group("han")
            if han is not None:
                tokens.extend(rjieba.cut(han))
            else:
                tokens.extend(segment._word_tokens(match.group("word")))
        return " ".join(tokens)

    return {
        "gse_ch": Design("gse_ch", "BenchGse", "gse_ch", "text"),
        "word": Design("word", "BenchWord", "word", "text"),
        "jieba": Design("jieba", "BenchJieba", "whitespace", "keywords", index_text, query_text),
        "jieba-precise": Design(
            "jieba-precise", "BenchJiebaPrecise", "whitespace", "keywords", precise, precise
        ),
        "trigram": Design("trigram", "BenchTrigram", "trigram", "text"),
    }


def create_collection(client: Any, design: Design) -> Any:
    """(Re)create the design's collection: `idx`, `text` and, if client-side, `keywords`."""
    from weaviate.classes.config import Configure, DataType, Property, Tokenization

    if client.collections.exists(design.collection):
        client.collections.delete(design.collection)
    properties = [Property(name="idx", data_type=DataType.INT)]
    if design.search_property == "text":
        properties.append(
            Property(
                name="text", data_type=DataType.TEXT, tokenization=Tokenization(design.tokenization)
            )
        )
    else:
        properties.append(
            Property(
                name="text", data_type=DataType.TEXT, index_searchable=False, index_filterable=False
            )
        )
        properties.append(
            Property(
                name=design.search_property,
                data_type=DataType.TEXT,
                tokenization=Tokenization(design.tokenization),
            )
        )
    return client.collections.create(
        design.collection, properties=properties, vector_config=Configure.Vectors.self_provided()
    )


@dataclass
class Result:
    """Measurements for one design; per-query values are keyed by the query word."""

    design: str
    segment_seconds: float = 0.0
    import_seconds: float = 0.0
    found: dict[str, bool] = field(default_factory=dict)
    precision: dict[str, float] = field(default_factory=dict)
    empty: dict[str, bool] = field(default_factory=dict)
    latencies_ms: list[float] = field(default_factory=list)
    error: str | None = None


def run_design(client: Any, design: Design, chunks: list[str], queries: list[str]) -> Result:
    """Import the chunks into the design's collection, then time and score every query."""
    from weaviate.util import generate_uuid5

    result = Result(design.name)
    collection = create_collection(client, design)

    searched = chunks
    if design.index_text:
        started = time.perf_counter()
        searched = [design.index_text(c) for c in chunks]
        result.segment_seconds = time.perf_counter() - started

    started = time.perf_counter()
    with collection.batch.fixed_size(batch_size=200, concurrent_requests=2) as batch:
        for index, (chunk, text) in enumerate(zip(chunks, searched, strict=True)):
            properties: dict[str, object] = {"idx": index, "text": chunk}
            if design.search_property != "text":
                properties[design.search_property] = text
            batch.add_object(properties, uuid=generate_uuid5(f"{design.name}:{index}"))
    result.import_seconds = time.perf_counter() - started
    failed = collection.batch.failed_objects
    if failed:
        raise BenchError(f"{design.name}: {len(failed)} objects failed: {failed[0].message}")
    count = collection.aggregate.over_all(total_count=True).total_count
    if count != len(chunks):
        raise BenchError(f"{design.name}: {count} objects stored, {len(chunks)} sent")

    def search(query: str) -> list[int]:
        response = collection.query.bm25(
            query=design.query_text(query),
            query_properties=[design.search_property],
            limit=TOP_K,
            return_properties=["idx"],
        )
        return [int(obj.properties["idx"]) for obj in response.objects]

    for query in queries[:10]:  # warm caches and the gRPC channel before timing
        search(query)
    for query in queries:
        started = time.perf_counter()
        hits = search(query)
        result.latencies_ms.append((time.perf_counter() - started) * 1000)
        relevant = sum(contains(chunks[i], query) for i in hits)
        possible = min(TOP_K, sum(contains(c, query) for c in chunks))
        result.found[query] = relevant > 0
        result.precision[query] = relevant / possible
        result.empty[query] = not hits
    return result


def warm_up(client: Any, chunks: list[str]) -> None:
    """Import into a throwaway collection so the first measured design pays no start-up costs."""
    design = Design("warm-up", "BenchWarmUp", "word", "text")
    collection = create_collection(client, design)
    with collection.batch.fixed_size(batch_size=200, concurrent_requests=2) as batch:
        for index, chunk in enumerate(chunks[:1000]):
            batch.add_object({"idx": index, "text": chunk})
    collection.query.bm25(query="内核", limit=TOP_K)
    client.collections.delete(design.collection)


def tokenize_probe(server: Server, design: Design, text: str) -> str:
    """What the server makes of `text` in this design's property (v1.37+ tokenize endpoint)."""
    sent = design.index_text(text) if design.index_text else text
    path = f"/v1/schema/{design.collection}/properties/{design.search_property}/tokenize"
    try:
        answer = server.request("POST", path, {"text": sent})
    except urllib.error.HTTPError as error:
        return f"(tokenize endpoint: HTTP {error.code} {error.read()[:120]!r})"
    except urllib.error.URLError as error:
        return f"(tokenize endpoint: {error})"
    tokens = answer.get("indexed") or answer.get("tokens") or answer
    return (
        " | ".join(tokens) if isinstance(tokens, list) else json.dumps(answer, ensure_ascii=False)
    )


def gse_dictionary_dir() -> Path:
    try:
        modcache = subprocess.run(
            ["go", "env", "GOMODCACHE"], capture_output=True, text=True, check=True
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        modcache = str(Path.home() / "go" / "pkg" / "mod")
    return Path(modcache) / GSE_MODULE / "data"


# ---------------------------------------------------------------------------------------------
# Report
# ---------------------------------------------------------------------------------------------


def _p95(values: list[float]) -> float:
    return statistics.quantiles(values, n=20)[-1] if len(values) >= 2 else values[0]


def _share(values: list[bool] | list[float]) -> str:
    return f"{statistics.fmean(values):.1%}" if values else "-"


def markdown_table(results: list[Result], query_sets: dict[str, list[str]], chunks: int) -> str:
    """One row per design: recall@10 per query set (and per word length for the first set)."""
    first_name, first = next(iter(query_sets.items()))
    lengths = sorted({len(q) for q in first})
    columns = [f"recall@10 {name} ({len(qs)})" for name, qs in query_sets.items()]
    columns += [f"{n}-char ({sum(len(q) == n for q in first)})" for n in lengths]
    columns += [
        f"precision@10 {first_name}",
        "no hits",
        "latency mean / p95 (ms)",
        "import s/1k chunks (+ client segmentation)",
    ]
    lines = ["| design | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    for result in results:
        if result.error:
            lines.append(f"| {result.design} | error: {result.error} |")
            continue
        cells = [_share([result.found[q] for q in qs]) for qs in query_sets.values()]
        cells += [_share([result.found[q] for q in first if len(q) == n]) for n in lengths]
        cells.append(_share([result.precision[q] for q in first]))
        cells.append(str(sum(result.empty.values())))
        cells.append(
            f"{statistics.fmean(result.latencies_ms):.1f} / {_p95(result.latencies_ms):.1f}"
        )
        per_1k = 1000 / chunks
        segment = f" (+{result.segment_seconds * per_1k:.2f})" if result.segment_seconds else ""
        cells.append(f"{result.import_seconds * per_1k:.2f}{segment}")
        lines.append(f"| {result.design} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def gse_segmenter(client: Any, server: Server) -> Callable[[str], list[str]]:
    """Segment text with the server's gse_ch tokenizer through the tokenize endpoint."""
    probe = Design("gse_ch", "BenchGseProbe", "gse_ch", "text")
    create_collection(client, probe)

    def segment(text: str) -> list[str]:
        answer = server.request(
            "POST", f"/v1/schema/{probe.collection}/properties/text/tokenize", {"text": text}
        )
        return list(answer["indexed"])

    return segment


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, required=True, help="output of bench/corpus.py")
    parser.add_argument(
        "--groups",
        default="man-zh_CN,handbook-zh-CN",
        help="comma-separated corpus groups under CORPUS/zh (default simplified)",
    )
    parser.add_argument("--chunks", type=int, default=3000)
    parser.add_argument("--queries", type=int, default=200, help="words per query set")
    parser.add_argument("--seed", type=int, default=20260)
    parser.add_argument("--designs", default=",".join(DESIGNS))
    parser.add_argument("--binary", type=Path, default=None)
    parser.add_argument("--json", type=Path, default=None, help="also write raw results here")
    parser.add_argument(
        "--hide-gse-dictionaries",
        action="store_true",
        help="run the server with gse's dictionary directory hidden (root only)",
    )
    args = parser.parse_args(argv)
    command = "python " + " ".join(shlex.quote(a) for a in [sys.argv[0], *(argv or sys.argv[1:])])

    import rjieba

    rng = random.Random(args.seed)
    wall = time.perf_counter()
    try:
        binary = find_binary(args.binary)
        chunks = load_chunks(args.corpus, args.groups.split(","), args.chunks, rng)
        query_sets = {"jieba-words": sample_queries(chunks, args.queries, rng, rjieba.cut)}
        note: list[str] = []
        all_designs = designs(note)
        chosen = [all_designs[name] for name in args.designs.split(",")]
        gse_dir = gse_dictionary_dir()

        import weaviate
        from weaviate.classes.init import AdditionalConfig, Auth, Timeout

        results: list[Result] = []
        probes: dict[str, dict[str, str]] = {}
        with (
            tempfile.TemporaryDirectory(prefix="stitcher-bench-") as workdir,
            weaviate_server(
                binary, Path(workdir), hide=gse_dir if args.hide_gse_dictionaries else None
            ) as server,
        ):
            client = weaviate.connect_to_local(
                host="127.0.0.1",
                port=server.http_port,
                grpc_port=server.grpc_port,
                auth_credentials=Auth.api_key(server.api_key),
                skip_init_checks=True,
                additional_config=AdditionalConfig(timeout=Timeout(init=30, query=60, insert=120)),
            )
            try:
                meta = client.get_meta()
                warm_up(client, chunks)
                try:
                    # The same sampling on gse's segmentation: each segmenter gets its own
                    # vocabulary once, so neither has the home advantage in both sets.
                    query_sets["gse-words"] = sample_queries(
                        chunks, args.queries, rng, gse_segmenter(client, server)
                    )
                except Exception as error:
                    print(f"gse_ch segmentation unavailable: {error}", file=sys.stderr)
                query_sets["latin-words"] = sample_latin_queries(chunks, args.queries // 2, rng)
                all_queries = list(dict.fromkeys(q for qs in query_sets.values() for q in qs))
                print(
                    f"{len(chunks)} chunks; queries: "
                    + ", ".join(f"{k} {len(v)}" for k, v in query_sets.items()),
                    file=sys.stderr,
                )
                for design in chosen:
                    try:
                        result = run_design(client, design, chunks, all_queries)
                        probes[design.name] = {
                            text: tokenize_probe(server, design, text) for text in PROBE_TEXTS
                        }
                    except Exception as error:  # one broken design must not hide the others
                        result = Result(design.name, error=str(error).splitlines()[0][:200])
                    results.append(result)
                    print(f"{design.name}: done", file=sys.stderr)
                    if client.collections.exists(design.collection):
                        client.collections.delete(design.collection)
            finally:
                client.close()
    except BenchError as error:
        print(f"error: {error}", file=sys.stderr)
        return 1

    print(f"## Chinese keyword search (BM25) — Weaviate {meta.get('version')}, {binary}\n")
    print(f"Command: `{command}` ({time.perf_counter() - wall:.0f} s)\n")
    print(
        f"{len(chunks)} chunks of {CHUNK_SIZE} chars ({CHUNK_OVERLAP} overlap) sampled from "
        f"{args.groups}; seed {args.seed}; client-side segmentation: {note[0]}.\n"
    )
    print(markdown_table(results, query_sets, len(chunks)))
    print(
        "\nrecall@10: share of query words with at least one top-10 hit containing the word. "
        "precision@10: hits containing it among the top 10 / min(10, chunks containing it). "
        "no hits: queries (both sets) that returned nothing.\n"
    )
    state = "present" if gse_dir.is_dir() else "MISSING"
    if args.hide_gse_dictionaries:
        state += ", hidden from the server for this run"
    print(f"gse dictionaries: {gse_dir} ({state})\n")
    for text in PROBE_TEXTS:
        print(f"\nIndex tokens for `{text}`:\n")
        for name, tokens in probes.items():
            print(f"- {name}: {tokens[text]}")
    misses = {
        r.design: [q for q in query_sets["jieba-words"] if not r.found.get(q, True)][:8]
        for r in results
        if not r.error
    }
    print(
        "\nSome missed jieba-words: "
        + "; ".join(f"{k}: {' '.join(v) or '-'}" for k, v in misses.items())
    )
    if "gse-words" in query_sets:
        misses = {
            r.design: [q for q in query_sets["gse-words"] if not r.found.get(q, True)][:8]
            for r in results
            if not r.error
        }
        print(
            "\nSome missed gse-words: "
            + "; ".join(f"{k}: {' '.join(v) or '-'}" for k, v in misses.items())
        )
    latin = query_sets["latin-words"]
    print(
        f"\nprecision@10 on latin-words ({len(latin)}, e.g. {' '.join(latin[:6])}): "
        + "; ".join(
            f"{r.design} {statistics.fmean(r.precision[q] for q in latin):.1%}"
            for r in results
            if not r.error and latin
        )
    )
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "command": command,
                    "chunks": len(chunks),
                    "query_sets": query_sets,
                    "results": [vars(r) for r in results],
                    "probes": probes,
                },
                ensure_ascii=False,
                indent=1,
            )
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

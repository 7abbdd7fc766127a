"""What an ingest is told (IngestOptions, the "N or P%" delete limit) and what it is handed (an
embedder, a progress display). The CLI builds these from its flags; nothing here does work."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from stitcher.errors import UsageError, setting


@dataclass(frozen=True)
class DeleteLimit:
    """How many of a source's stored documents one `--prune` run may delete.

    `count`: at most this many documents per source; `percent`: at most this share of the
    source's stored documents (those the listing covers). The default allows half.
    """

    count: int | None = None
    percent: float | None = 50.0

    @classmethod
    def parse(cls, text: str) -> DeleteLimit:
        """ "N" (documents) or "P%" (of each source's stored documents); UsageError otherwise."""
        value = text.strip()
        try:
            if value.endswith("%"):
                percent = float(value[:-1])
                if 0 <= percent <= 100:
                    return cls(count=None, percent=percent)
            elif int(value) >= 0:
                return cls(count=int(value), percent=None)
        except ValueError:
            pass
        raise UsageError(
            f"{setting('max_delete', text)}: give a number of documents (e.g. 20) or a "
            "percentage of each source's stored documents (e.g. 10%, 100%)"
        )

    def allows(self, deleting: int, stored: int) -> bool:
        """Whether deleting `deleting` of `stored` documents stays within the limit."""
        if self.count is not None and deleting > self.count:
            return False
        return not (self.percent is not None and deleting * 100 > self.percent * stored)

    def __str__(self) -> str:
        if self.count is not None:
            return str(self.count)
        return f"{self.percent:g}%"


class DocumentEmbedder(Protocol):
    """What ingest needs from an embedder (stitcher.embed.SentenceTransformerEmbedder)."""

    @property
    def dimension(self) -> int: ...

    def embed_documents(self, texts: Sequence[str]) -> Sequence[Sequence[float]]:
        """One vector per text; a float32 array of shape (len(texts), dimension) is best."""
        ...


class IngestProgress(Protocol):
    """Callbacks for a progress display; all optional to act on."""

    def planned(self, files: int) -> None: ...

    def file_done(self, source: str) -> None: ...

    def embedded(self, chunks: int) -> None: ...

    def notice(self, message: str) -> None: ...


class SilentProgress:
    """Progress that shows nothing (the library default); subclass to show some of it."""

    def planned(self, files: int) -> None:
        pass

    def file_done(self, source: str) -> None:
        pass

    def embedded(self, chunks: int) -> None:
        pass

    def notice(self, message: str) -> None:
        pass


@dataclass(frozen=True)
class IngestOptions:
    """Everything `stitcher ingest` can be told, minus where the server is."""

    chunk_size: int = 250
    chunk_overlap: int = 50
    glob: str | None = None
    prune: bool = False
    dry_run: bool = False
    tags: tuple[str, ...] = ()
    tags_from_dirs: bool = False
    batch_size: int = 32
    #: Names each document mentions, by doc id or path (stitcher.graph.read_mentions_file);
    #: added to the `mentions` of its front matter.
    mentions: Mapping[str, Sequence[str]] | None = None
    #: The source the documents belong to (first segment of their ids); None: each folder's
    #: own name. Naming it also re-attaches a source to a folder it was not registered from.
    source: str | None = None
    #: What --prune may delete before it refuses (PruneRefused); None: the default, 50%.
    max_delete: DeleteLimit | None = None
    #: Where the embedder runs (stitcher.embed.DEVICES); nothing about it is stored: cpu and
    #: cuda vectors of one model agree within float tolerance.
    device: str = "auto"
    #: Encode processes (stitcher.embed.EncodePool); 1 embeds in this process.
    workers: int = 1

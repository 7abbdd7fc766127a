"""Rewrite a seed-layout collection in place into stitcher's layout, keeping its vectors.

Weaviate cannot rename a collection, and "in place" means the user keeps using the same name. So
the data moves twice, and the original objects are deleted only once a complete, verified copy
exists elsewhere:

1. read every object with its vector; order the chunks of each `source` along the `parent_id`
   chain and rebuild the document text by overlap matching (stitcher.foreign.chains);
2. write them in stitcher's layout (doc ids, chunk order, offsets, deterministic ids, the SAME
   vectors) into a temporary collection ``<Name>_StitcherAdopt``, verify ids, texts and vectors,
   and mark it verified (in its description);
3. delete the original, recreate it in stitcher's layout, copy, verify, delete the temporary one.

A run that dies after step 2 is finished by the next `adopt`: it finds the verified temporary
collection and repeats step 3 from it (writes are idempotent: same ids replace). A temporary
collection next to a still-intact original is a leftover of an interrupted step 2 and is
rebuilt.

Adopted documents get a document hash of their own (of the reconstructed text), never the one
`stitcher ingest` computes from the file, so the next ingest always treats them as changed:
it chunks the files its own way, reuses the stored vector of every chunk whose text is
identical to an adopted one, embeds only the rest, and then deletes the adopted chunks.
"""

from __future__ import annotations

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from stitcher.embed import resolve_model
from stitcher.errors import StitcherError, UsageError, WriteFailed, setting
from stitcher.foreign.chains import Reconstruction, SeedObject, chains, reconstruct
from stitcher.ids import chunk_hash, chunk_uuid
from stitcher.models import ChunkRecord, CollectionSettings, sha256_hex
from stitcher.store.base import ChunkStore

#: Suffix of the temporary collection that holds the verified copy while the original is
#: recreated.
TEMPORARY_SUFFIX = "_StitcherAdopt"

#: Key of the adopt record added to the temporary collection's description (next to stitcher's
#: settings, which ignore unknown keys).
MARKER_KEY = "stitcher_adopt"

#: Vectors read back must equal the ones written up to float32 rounding.
_VECTOR_TOLERANCE = 1e-6


class AdoptProgress(Protocol):
    """Callbacks for a progress display."""

    def step(self, message: str) -> None: ...


class _SilentProgress:
    def step(self, message: str) -> None:
        pass


@dataclass
class AdoptReport:
    """What `adopt` did.

    Attributes:
        collection: The collection, now in stitcher's layout.
        objects_read: Objects in the seed-layout collection.
        objects_written: Objects in the adopted collection (objects_read - duplicates_dropped).
        documents: Distinct document ids.
        runs: Chains of chunks found (one per document, more when a file was loaded twice).
        duplicates_dropped: Objects of a chain identical to another chain of the same source
            (the seed's random ids duplicate every chunk when a file is loaded twice).
        versions: Documents adopted with more than one version (chains of one source whose
            texts differ); the next ingest keeps only the file's version.
        zero_overlap_joins: Joins where neighbouring chunks shared no text; a line break was put
            back there (and ends the chunk's adopted text).
        doc_ids: The document id given to each `source`.
        dimension: Length of the vectors.
        model: Embedding model recorded in the collection's settings.
        temporary: Name of the temporary collection used (deleted at the end).
        resumed: True when this run finished an earlier, interrupted adopt.
        seconds: Wall time.
    """

    collection: str
    objects_read: int = 0
    objects_written: int = 0
    documents: int = 0
    runs: int = 0
    duplicates_dropped: int = 0
    versions: list[str] = field(default_factory=list)
    zero_overlap_joins: int = 0
    doc_ids: dict[str, str] = field(default_factory=dict)
    dimension: int = 0
    model: str = ""
    temporary: str = ""
    resumed: bool = False
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        """The `--json` object."""
        return {
            "collection": self.collection,
            "objects_read": self.objects_read,
            "objects_written": self.objects_written,
            "documents": self.documents,
            "runs": self.runs,
            "duplicates_dropped": self.duplicates_dropped,
            "versions": self.versions,
            "zero_overlap_joins": self.zero_overlap_joins,
            "doc_ids": self.doc_ids,
            "dimension": self.dimension,
            "model": self.model,
            "resumed": self.resumed,
            "seconds": round(self.seconds, 3),
        }

    def one_line(self) -> str:
        """A one-line summary."""
        extra = ""
        if self.duplicates_dropped:
            extra = f", {self.duplicates_dropped} duplicate chunks dropped"
        return (
            f"{self.collection}: adopted {self.objects_written} chunks of {self.documents} "
            f"documents into stitcher's layout, vectors kept{extra} in {self.seconds:.1f}s; "
            "run `stitcher ingest` on the same files to take over"
        )


@dataclass(frozen=True)
class _Plan:
    records: list[ChunkRecord]
    vectors: list[list[float]]


def doc_id_for_source(source: str, root: Path | None, cwd: Path | None = None) -> str:
    """The document id `stitcher ingest ROOT` gives the file the seed loaded as `source`.

    ``ingest ROOT`` names a file "<ROOT's directory name>/<path below ROOT>". A relative
    `source` is taken relative to `cwd` (default: the current directory); when that does not
    lead under `root`, its path parts after the last one named like `root` are used (the seed
    may have run from another directory), and failing that it is taken relative to `root`
    itself (the seed ran inside it, e.g. `DirectoryLoader(".")`). Without `root`, the id is
    `source` itself, with "/" separators.

    Raises:
        UsageError: an absolute `source` does not lie under `root`.
    """
    normalised = source.replace("\\", "/")
    if root is None:
        return normalised
    root_abs = Path(os.path.abspath(root))
    root_name = root_abs.name or "root"
    base = cwd if cwd is not None else Path.cwd()
    path = Path(normalised)
    candidates = [path if path.is_absolute() else base / path]
    for candidate in candidates:
        for a, b in ((Path(os.path.abspath(candidate)), root_abs),
                     (candidate.resolve(), root_abs.resolve())):  # fmt: skip
            try:
                relative = a.relative_to(b)
            except ValueError:
                continue
            if relative.parts:
                return f"{root_name}/{relative.as_posix()}"
    parts = path.parts
    if root_name in parts[:-1]:
        last = len(parts) - 1 - parts[::-1].index(root_name)
        tail = parts[last + 1 :]
        if tail:
            return "/".join([root_name, *tail])
    if not path.is_absolute() and ".." not in path.parts and path.parts:
        return "/".join([root_name, *path.parts])
    raise UsageError(
        f"source {source!r} does not lie under {setting('root')} {root}: pass the directory the "
        "seed loaded its files from (the one you will give `stitcher ingest`)"
    )


def adopt(
    store: ChunkStore,
    *,
    root: Path | None = None,
    model_name: str | None = None,
    chunk_size: int = 250,
    chunk_overlap: int = 50,
    cwd: Path | None = None,
    progress: AdoptProgress | None = None,
) -> AdoptReport:
    """Rewrite a seed-layout collection in place into stitcher's layout, keeping its vectors.

    Args:
        store: The seed-layout collection (any ChunkStore: `WeaviateStore(client, name)`);
            it keeps its name.
        root: The directory the seed loaded its files from, i.e. the one to give `stitcher
            ingest` later; document ids are derived from each object's `source` relative to it
            (see `doc_id_for_source`). None keeps `source` as the document id.
        model_name: The model the vectors were made with (default: the packaged MiniLM); it is
            recorded in the settings, and `stitcher ingest` must use the same one.
        chunk_size: Chunk size recorded in the settings (what later ingests will use).
        chunk_overlap: Chunk overlap recorded in the settings.
        cwd: Directory relative `source` paths are taken from (default: the current one).
        progress: Receives one line per step.

    Returns:
        What was done.

    Raises:
        CollectionMissing: The collection does not exist (and no interrupted adopt of it).
        UsageError: It is not in the seed's layout, a `source` lies outside `root`, or objects
            have no vectors.
        WriteFailed: Writing or verifying a copy failed; the message says where the data is.
    """
    started = time.monotonic()
    say = progress or _SilentProgress()
    name = store.name
    temporary = name + TEMPORARY_SUFFIX
    report = AdoptReport(collection=name, temporary=temporary)
    copy = store.sibling(temporary)

    if copy.exists():
        original_layout = store.layout() if store.exists() else None
        marker = copy.marker(MARKER_KEY)
        if original_layout == "seed":
            say.step(f"removing {temporary}, left over from an interrupted adopt")
            copy.drop()
        elif marker.get("verified") and original_layout in (None, "stitcher"):
            say.step(f"finishing an interrupted adopt from {temporary}")
            _finish_from_temporary(store, copy, marker, report, say)
            report.resumed = True
            report.seconds = time.monotonic() - started
            return report
        else:
            raise StitcherError(
                f"found {temporary!r} from an interrupted adopt, but it is not verified "
                f"and {name!r} is not in the seed's layout: inspect both collections "
                "before deleting either"
            )

    layout = store.layout()
    if layout == "stitcher":
        raise UsageError(f"collection {name!r} is already in stitcher's layout: nothing to adopt")
    if layout == "unknown":
        raise UsageError(
            f"collection {name!r} is not in the seed's layout (it needs `text` and `parent_id` "
            "properties, as LangChain's WeaviateVectorStore with a parent_id chain makes)"
        )

    say.step(f"reading {name}")
    objects = _read_all(store)
    report.objects_read = len(objects)
    model = resolve_model(model_name).name
    plan = _plan(name, objects, root, cwd, report)
    settings = CollectionSettings(
        model=model,
        dimension=report.dimension,
        chunk_size=chunk_size,
        chunk_overlap=chunk_overlap,
    )
    report.model = model

    say.step(f"writing {len(plan.records)} chunks to {temporary}")
    _write_copy(copy, settings, plan)
    _verify(copy, plan)
    copy.set_marker(MARKER_KEY, {"from": name, "objects": len(plan.records), "verified": True})

    say.step(f"replacing {name} with the verified copy")
    store.drop()
    _write_and_verify_final(store, temporary, settings, plan)
    copy.drop()
    report.objects_written = len(plan.records)
    report.seconds = time.monotonic() - started
    return report


# -- reading and planning ------------------------------------------------------------------------


def _read_all(store: ChunkStore) -> list[SeedObject]:
    name = store.name
    # Complete or not at all (on Weaviate checked against every replica's count).
    objects = store.seed_objects()
    missing = [obj.id for obj in objects if not obj.vector]
    if missing:
        raise UsageError(
            f"{len(missing)} objects of collection {name!r} have no vector (e.g. {missing[0]}); "
            "adopt keeps the stored vectors and cannot make new ones: ingest the files instead"
        )
    return objects


def _plan(
    name: str,
    objects: Sequence[SeedObject],
    root: Path | None,
    cwd: Path | None,
    report: AdoptReport,
) -> _Plan:
    """Records in stitcher's layout with the objects' own vectors, document by document."""
    dimensions = {len(obj.vector or ()) for obj in objects}
    if len(dimensions) > 1:
        raise UsageError(
            f"collection {name!r} holds vectors of different lengths {sorted(dimensions)}; "
            "it cannot be one stitcher collection"
        )
    report.dimension = dimensions.pop() if dimensions else 0

    runs = chains(objects)
    report.runs = len(runs)
    records: list[ChunkRecord] = []
    vectors: list[list[float]] = []
    seen_versions: dict[tuple[str, str], int] = {}
    versions: dict[str, set[str]] = {}
    for run in runs:
        source = run[0].source
        doc_id = report.doc_ids.get(source)
        if doc_id is None:
            doc_id = doc_id_for_source(source, root, cwd)
            report.doc_ids[source] = doc_id
        rebuilt: Reconstruction = reconstruct(run)
        # Not Document.doc_hash of the file: the next ingest must see a new version.
        doc_hash = sha256_hex("stitcher-adopt\x00" + rebuilt.text)
        if (doc_id, doc_hash) in seen_versions:
            report.duplicates_dropped += len(run)
            continue
        seen_versions[(doc_id, doc_hash)] = len(run)
        versions.setdefault(doc_id, set()).add(doc_hash)
        report.zero_overlap_joins += rebuilt.zero_overlap_joins
        parent_id: str | None = None
        for index, placed in enumerate(rebuilt.placed):
            record_id = chunk_uuid(name, doc_id, doc_hash, index)
            records.append(
                ChunkRecord(
                    id=record_id,
                    doc_id=doc_id,
                    doc_hash=doc_hash,
                    chunk_index=index,
                    start=placed.start,
                    end=placed.end,
                    text=placed.text,
                    source=source,
                    chunk_hash=chunk_hash(placed.text),
                    doc_length=len(rebuilt.text),
                    parent_id=parent_id,
                    metadata=dict(placed.obj.extra),
                )
            )
            vectors.append(list(placed.obj.vector or []))
            parent_id = record_id
    report.documents = len(versions)
    report.versions = sorted(doc_id for doc_id, hashes in versions.items() if len(hashes) > 1)
    return _Plan(records, vectors)


# -- writing and verifying -----------------------------------------------------------------------


def _write_copy(store: ChunkStore, settings: CollectionSettings, plan: _Plan) -> None:
    name = store.name
    if not store.exists():
        store.create(settings)
    failures = store.write(plan.records, plan.vectors)
    if failures:
        raise WriteFailed(
            f"{len(failures)} chunks could not be written to {name!r} "
            f"(first: {failures[0].reason}); run `stitcher adopt` again"
        )


def _verify(store: ChunkStore, plan: _Plan) -> None:
    """Every planned object is stored with its text and vector, and nothing else is."""
    name = store.name
    # Read back through the node that wrote: on a cluster its own commit may still be in flight
    # when QUORUM was reached, so the listing is retried until it agrees with the replicas.
    stored = {obj.id: obj for obj in store.seed_objects(["text"])}
    problems: list[str] = []
    if len(stored) != len(plan.records):
        problems.append(f"{len(stored)} objects instead of {len(plan.records)}")
    for record, vector in zip(plan.records, plan.vectors, strict=True):
        found = stored.get(record.id)
        if found is None:
            problems.append(f"chunk {record.id} missing")
        elif found.text != record.text:
            problems.append(f"chunk {record.id} has other text")
        elif not _same_vector(found.vector, vector):
            problems.append(f"chunk {record.id} has another vector")
        if len(problems) > 3:
            break
    if problems:
        raise WriteFailed(
            f"the copy in {name!r} does not match what was written: {'; '.join(problems)}; "
            "run `stitcher adopt` again"
        )


def _same_vector(a: Sequence[float] | None, b: Sequence[float]) -> bool:
    if a is None or len(a) != len(b):
        return False
    return all(abs(x - y) <= _VECTOR_TOLERANCE for x, y in zip(a, b, strict=True))


def _write_and_verify_final(
    store: ChunkStore, temporary: str, settings: CollectionSettings, plan: _Plan
) -> None:
    try:
        _write_copy(store, settings, plan)
        _verify(store, plan)
    except StitcherError as error:
        raise WriteFailed(
            f"{error.unworded} — nothing is lost: the verified copy is in collection "
            f"{temporary!r}; run `stitcher adopt` again to finish"
        ) from error


def _finish_from_temporary(
    store: ChunkStore,
    copy: ChunkStore,
    marker: dict[str, Any],
    report: AdoptReport,
    say: AdoptProgress,
) -> None:
    """Step 3 of an adopt whose original was already deleted (or partly recreated)."""
    name, temporary = store.name, copy.name
    settings = copy.settings()
    if settings is None:
        raise StitcherError(f"collection {temporary!r} has no stitcher settings: inspect it")
    vectors = {obj.id: list(obj.vector or []) for obj in copy.seed_objects([])}
    if len(vectors) != int(marker.get("objects", -1)):
        raise StitcherError(
            f"collection {temporary!r} holds {len(vectors)} objects, not the "
            f"{marker.get('objects')} it was verified with: inspect it before deleting anything"
        )
    records = sorted(copy.fetch(list(vectors)), key=lambda r: (r.doc_id, r.chunk_index))
    plan = _Plan(records, [vectors[r.id] for r in records])
    _write_and_verify_final(store, temporary, settings, plan)
    copy.drop()
    report.objects_read = report.objects_written = len(records)
    report.documents = len({r.doc_id for r in records})
    report.dimension = settings.dimension
    report.model = settings.model
    say.step(f"{name} restored from {temporary}")

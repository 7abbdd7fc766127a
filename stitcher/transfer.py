"""Export a collection to JSON Lines and import it elsewhere, vectors included (no re-embedding).

The file (README "Backups and moves"), one JSON object per line:

1. a header: ``{"format": "stitcher-export", "version": 1, "collection", "settings" (model,
   dimension, chunking, ...), "rules" (text rules of the exporting stitcher), "count" (objects
   when the export began), "fields" (kind of each metadata key), "sources" (the source registry
   entries of the collection)}``;
2. one line per object, in id order: ``{"id", "properties", "vector"}``. A collection with a
   named vector per model part (settings ``"vectors": "by-script"``) exports each chunk's one
   vector the same way: which name it is stored under follows from the chunk's text
   (stitcher.store.vectors), so the import, which creates the collection with the header's
   settings, puts it back under the same name;
3. a trailer: ``{"end": true, "count", "sha256"}``. The content hash cannot go into the header
   without reading the collection twice, and a file without its trailer is known to be cut off.

`sha256` is order-independent: the sum, modulo 2**256, of the SHA-256 of each object line in
canonical form (sorted keys, no spaces). The import computes it over the file before writing
anything, and again over the collection it filled, from what the server returns.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, fields
from datetime import date, datetime
from pathlib import Path
from typing import IO, Any

from stitcher import rules
from stitcher.errors import (
    CollectionMissing,
    ExportFileInvalid,  # it lives in stitcher.errors; imported from here as it always was
    ServerError,
    SettingsMismatch,
    UsageError,
    WriteFailed,
)
from stitcher.faults import fault_point
from stitcher.ids import canonical_collection_name
from stitcher.models import ChunkContext, ChunkRecord, CollectionSettings
from stitcher.store.base import BackupOutcome, ChunkStore, StoreServer
from stitcher.store.schema import parse_date
from stitcher.store.vectors import check_layout

FORMAT = "stitcher-export"
FORMAT_VERSION = 1
_MODULUS = 1 << 256
#: Objects per write (and per existence check) when importing.
IMPORT_BATCH = 200

Notice = Callable[[str], None]


@dataclass(frozen=True)
class ExportReport:
    """What an export wrote."""

    collection: str
    count: int
    sha256: str
    path: str

    def one_line(self) -> str:
        return f"exported {self.count} objects of {self.collection} to {self.path}"


@dataclass(frozen=True)
class ImportReport:
    """What an import did: objects written, objects already present and identical, verified."""

    collection: str
    count: int
    written: int
    skipped: int
    sha256: str
    created: bool

    def one_line(self) -> str:
        made = "created" if self.created else "existing"
        return (
            f"imported {self.count} objects into {made} collection {self.collection} "
            f"({self.written} written, {self.skipped} already there); counts and hash verified"
        )

    def to_json(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self)}


# --- the line format -------------------------------------------------------------------------


def record_to_line(record: ChunkRecord, vector: list[float]) -> dict[str, Any]:
    """The JSON object of one chunk: its id, every property (metadata by original key) and
    its vector."""
    properties: dict[str, Any] = {
        "doc_id": record.doc_id,
        "doc_hash": record.doc_hash,
        "chunk_index": record.chunk_index,
        "start": record.start,
        "end": record.end,
        "text": record.text,
        "source": record.source,
        "chunk_hash": record.chunk_hash,
        "doc_length": record.doc_length,
        "parent_id": record.parent_id,
        "starts_sentence": record.starts_sentence,
        "ends_sentence": record.ends_sentence,
        "rules": record.rules,
        "context": None
        if record.context is None
        else {
            "before": record.context.before,
            "after": record.context.after,
            "neighbours": [list(n) for n in record.context.neighbours],
        },
        "metadata": {key: _json_value(value) for key, value in record.metadata.items()},
    }
    return {"id": record.id, "properties": properties, "vector": [float(x) for x in vector]}


def line_to_record(line: dict[str, Any], kinds: dict[str, str]) -> tuple[ChunkRecord, list[float]]:
    """Inverse of `record_to_line`; `kinds` (the header's "fields") turns dates back into dates.

    Raises:
        KeyError, TypeError, ValueError: The object lacks a property or has one of a wrong type.
    """
    properties = line["properties"]
    context = properties.get("context")
    metadata = {
        key: parse_date(value) if kinds.get(key) == "date" else value
        for key, value in dict(properties.get("metadata") or {}).items()
    }
    record = ChunkRecord(
        id=str(line["id"]),
        doc_id=str(properties["doc_id"]),
        doc_hash=str(properties["doc_hash"]),
        chunk_index=int(properties["chunk_index"]),
        start=int(properties["start"]),
        end=int(properties["end"]),
        text=str(properties["text"]),
        source=str(properties["source"]),
        chunk_hash=str(properties["chunk_hash"]),
        doc_length=int(properties.get("doc_length") or 0),
        parent_id=properties.get("parent_id"),
        metadata=metadata,
        starts_sentence=properties.get("starts_sentence"),
        ends_sentence=properties.get("ends_sentence"),
        context=None
        if context is None
        else ChunkContext(
            str(context["before"]),
            str(context["after"]),
            tuple((int(i), int(a), int(b)) for i, a, b in context["neighbours"]),
        ),
        rules=properties.get("rules"),
    )
    vector = line["vector"]
    if not isinstance(vector, list) or not all(isinstance(x, (int, float)) for x in vector):
        raise TypeError("vector is not a list of numbers")
    return record, [float(x) for x in vector]


def _json_value(value: Any) -> Any:
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, tuple):
        return list(value)
    return value


def canonical(line: dict[str, Any]) -> str:
    """The form an object line is written in and hashed in."""
    return json.dumps(line, ensure_ascii=False, sort_keys=True, separators=(",", ":"))


class ContentHash:
    """Order-independent hash of a set of object lines (sum of their SHA-256, mod 2**256)."""

    def __init__(self) -> None:
        self.total = 0
        self.count = 0

    def add(self, text: str) -> None:
        digest = hashlib.sha256(text.encode("utf-8")).digest()
        self.total = (self.total + int.from_bytes(digest, "big")) % _MODULUS
        self.count += 1

    def hexdigest(self) -> str:
        return f"{self.total:064x}"


# --- export ----------------------------------------------------------------------------------


def export_collection(
    store: ChunkStore, settings: CollectionSettings, out: IO[str], *, path: str = "-"
) -> ExportReport:
    """Write `store` to `out` as an export file: header, objects (streamed), trailer."""
    kinds = {key: kind for key, kind in store.fields().items()}
    header = {
        "format": FORMAT,
        "version": FORMAT_VERSION,
        "collection": store.name,
        "settings": settings.recorded(),
        "rules": rules.TEXT_RULES_VERSION,
        "count": store.count(),
        "fields": kinds,
        "sources": store.source_roots(),
    }
    out.write(json.dumps(header, ensure_ascii=False, sort_keys=True) + "\n")
    content = ContentHash()
    for record, vector in store.records_with_vectors():
        text = canonical(record_to_line(record, vector))
        content.add(text)
        out.write(text + "\n")
    out.write(json.dumps({"end": True, "count": content.count, "sha256": content.hexdigest()}))
    out.write("\n")
    out.flush()
    return ExportReport(store.name, content.count, content.hexdigest(), path)


@contextmanager
def export_target(path: str, stdout: IO[str]) -> Iterator[IO[str]]:
    """`stdout` for "-"; else FILE (gzip when it ends in .gz), written to FILE.partial and
    renamed when complete, so an interrupted export never leaves a file that looks whole."""
    if path == "-":
        yield stdout
        return
    final = Path(path)
    partial = final.with_name(final.name + ".partial")
    try:
        handle = _open_for_writing(partial, compress=final.suffix == ".gz")
    except OSError as error:
        raise UsageError(f"cannot write {path}: {error.strerror or error}") from None
    try:
        with handle as raw:
            yield raw
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    os.replace(partial, final)


def _open_for_writing(path: Path, *, compress: bool) -> IO[str]:
    if compress:
        return gzip.open(path, "wt", encoding="utf-8")
    return path.open("w", encoding="utf-8")


# --- import ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExportHeader:
    """The first line of an export file, checked."""

    collection: str
    settings: CollectionSettings
    rules: str
    count: int
    kinds: dict[str, str]
    sources: dict[str, str]


def open_export(path: str) -> IO[str]:
    """The export file as text, gunzipped when it is gzip (by its magic bytes, not its name)."""
    if path == "-":
        raise UsageError(
            "import reads a file twice (checks it whole before writing): give a file, not -"
        )
    file = Path(path)
    if not file.is_file():
        raise UsageError(f"{path} is not a file")
    with file.open("rb") as probe:
        magic = probe.read(2)
    if magic == b"\x1f\x8b":
        return io.TextIOWrapper(gzip.open(file, "rb"), encoding="utf-8")
    return file.open(encoding="utf-8")


def read_header(path: str) -> ExportHeader:
    """The header of an export file (the first line only).

    Raises:
        ExportFileInvalid: The first line is not a stitcher export header.
    """
    with open_export(path) as handle:
        return _read_header(path, iter(enumerate(handle, start=1)))


def check_export(path: str) -> tuple[ExportHeader, str, int]:
    """Read the whole file once: header, every object, trailer, counts and content hash.

    Returns:
        The header, the content hash and the number of objects.

    Raises:
        ExportFileInvalid: Anything is wrong; the message names the line.
    """
    with open_export(path) as handle:
        lines = iter(enumerate(handle, start=1))
        header = _read_header(path, lines)
        content = ContentHash()
        trailer: dict[str, Any] | None = None
        for number, text in lines:
            item = _parse(path, number, text)
            if item.get("end") is True:
                trailer = item
                extra = next(lines, None)
                if extra is not None:
                    raise ExportFileInvalid(f"{path} line {extra[0]}: data after the end line")
                break
            try:
                record, vector = line_to_record(item, header.kinds)
            except (KeyError, TypeError, ValueError) as error:
                raise ExportFileInvalid(
                    f"{path} line {number}: not a stitcher object ({type(error).__name__}: "
                    f"{error}); nothing was imported"
                ) from None
            if len(vector) != header.settings.dimension:
                raise ExportFileInvalid(
                    f"{path} line {number}: vector of length {len(vector)}, the collection's "
                    f"are {header.settings.dimension}; nothing was imported"
                )
            content.add(canonical(record_to_line(record, vector)))
    if trailer is None:
        raise ExportFileInvalid(
            f"{path} has no end line after {content.count} objects: the file is cut off "
            "(an interrupted export or copy); nothing was imported"
        )
    if trailer.get("count") != content.count or trailer.get("sha256") != content.hexdigest():
        raise ExportFileInvalid(
            f"{path}: its end line promises {trailer.get('count')} objects with hash "
            f"{str(trailer.get('sha256'))[:12]}…, the file holds {content.count} with hash "
            f"{content.hexdigest()[:12]}…: the file was changed or damaged; nothing was imported"
        )
    return header, content.hexdigest(), content.count


def _read_header(path: str, lines: Iterator[tuple[int, str]]) -> ExportHeader:
    first = next(lines, None)
    if first is None:
        raise ExportFileInvalid(f"{path} is empty: not a stitcher export")
    data = _parse(path, 1, first[1])
    if data.get("format") != FORMAT:
        raise ExportFileInvalid(f"{path} is not a stitcher export (its first line has no header)")
    if data.get("version") != FORMAT_VERSION:
        raise ExportFileInvalid(
            f"{path} is export format version {data.get('version')}; this stitcher reads "
            f"version {FORMAT_VERSION}"
        )
    try:
        return ExportHeader(
            collection=str(data["collection"]),
            settings=_header_settings(data["settings"]),
            rules=str(data.get("rules") or ""),
            count=int(data["count"]),
            kinds={str(k): str(v) for k, v in dict(data.get("fields") or {}).items()},
            sources={str(k): str(v) for k, v in dict(data.get("sources") or {}).items()},
        )
    except (KeyError, TypeError, ValueError) as error:
        raise ExportFileInvalid(f"{path} line 1: malformed header ({error})") from None


def _header_settings(recorded: Any) -> CollectionSettings:
    """The header's settings; ValueError for a vector layout this stitcher cannot create."""
    settings = CollectionSettings(**recorded)
    check_layout(settings.vectors)
    return settings


def _parse(path: str, number: int, text: str) -> dict[str, Any]:
    try:
        item = json.loads(text)
    except ValueError as error:
        raise ExportFileInvalid(
            f"{path} line {number}: not JSON ({error.args[0] if error.args else error}); "
            "nothing was imported"
        ) from None
    if not isinstance(item, dict):
        raise ExportFileInvalid(f"{path} line {number}: not a JSON object; nothing was imported")
    return item


def import_collection(
    store: ChunkStore, path: str, *, notice: Notice | None = None
) -> ImportReport:
    """Fill `store` from an export file, with its vectors; safe to run again after a failure.

    The file is checked whole first (nothing is written from a damaged file). The collection
    is created with the file's settings, or must already have the same ones. Objects already
    present with identical properties are skipped, so a re-run after an interruption only
    writes the rest. At the end the collection is read back: its count and content hash must
    be the file's. The source registry entries travel with the collection.

    Raises:
        ExportFileInvalid: The file is damaged, cut off or not an export.
        SettingsMismatch: The collection exists with other settings (another model, chunking).
        WriteFailed: Objects were refused; running the import again retries them.
    """
    notice = notice or (lambda message: None)
    header, expected_hash, expected_count = check_export(path)
    created = False
    if store.exists():
        existing = store.settings()
        if existing is None:
            raise SettingsMismatch(
                f"collection {store.name!r} exists and was not made by stitcher: import into a "
                "new name with -c NEW"
            )
        differences = header.settings.differences(existing)
        if differences:
            raise SettingsMismatch(
                f"collection {store.name!r} exists with other settings than {path} "
                f"({'; '.join(differences)}): import into a new name with -c NEW"
            )
    else:
        store.create(header.settings)
        created = True
    if header.rules != rules.TEXT_RULES_VERSION:
        notice(
            f"{path} was made under text rules {header.rules!r}, this stitcher has "
            f"{rules.TEXT_RULES_VERSION!r}: the next ingest rebuilds those documents' chunks "
            "(reusing the vectors of unchanged text)"
        )
    written = skipped = 0
    with open_export(path) as handle:
        lines = iter(handle)
        next(lines)  # the header, checked above
        batch: list[tuple[ChunkRecord, list[float]]] = []
        for text in lines:
            item = json.loads(text)
            if item.get("end") is True:
                break
            batch.append(line_to_record(item, header.kinds))
            if len(batch) >= IMPORT_BATCH:
                added, same = _import_batch(store, batch)
                written, skipped = written + added, skipped + same
                batch = []
        if batch:
            added, same = _import_batch(store, batch)
            written, skipped = written + added, skipped + same
    for name, root in sorted(header.sources.items()):
        store.register_source(name, root)
    _verify(store, path, expected_count, expected_hash)
    return ImportReport(store.name, expected_count, written, skipped, expected_hash, created)


def _import_batch(
    store: ChunkStore, batch: list[tuple[ChunkRecord, list[float]]]
) -> tuple[int, int]:
    """Write what is not already stored as it is; returns (written, skipped)."""
    fault_point("import")
    present = {record.id: record for record in store.fetch([r.id for r, _ in batch])}
    todo = [(record, vector) for record, vector in batch if present.get(record.id) != record]
    if todo:
        failures = store.write([r for r, _ in todo], [v for _, v in todo])
        if failures:
            first = failures[0]
            raise WriteFailed(
                f"{len(failures)} objects could not be written to {store.name!r}, e.g. "
                f"{first.id} ({first.reason}); run the import again to retry them"
            )
    return len(todo), len(batch) - len(todo)


def _verify(store: ChunkStore, path: str, expected_count: int, expected_hash: str) -> None:
    content = ContentHash()
    for record, vector in store.records_with_vectors():
        content.add(canonical(record_to_line(record, vector)))
    if content.count != expected_count or content.hexdigest() != expected_hash:
        raise WriteFailed(
            f"collection {store.name!r} holds {content.count} objects (hash "
            f"{content.hexdigest()[:12]}…) after the import, {path} has {expected_count} (hash "
            f"{expected_hash[:12]}…): it held other objects before, or was written to meanwhile"
        )


# --- backups of the local server (Weaviate's backup-filesystem module) -----------------------

_BACKUP_ID = re.compile(r"[a-z0-9][a-z0-9_-]{0,63}")


@dataclass(frozen=True)
class BackupReport:
    """A finished backup or restore: its id, the collections in it and where it lies."""

    backup_id: str
    collections: tuple[str, ...]
    path: str

    def one_line(self, done: str) -> str:
        names = ", ".join(self.collections) or "no collections"
        return f"{done} backup {self.backup_id} ({names}) in {self.path}"


def backup_local(
    server: StoreServer, backup_id: str, collections: list[str] | None, backups_dir: Path
) -> BackupReport:
    """Back up collections of the local server (all of stitcher's when none are named).

    stitcher's own bookkeeping (source registry, leases) is not part of the Weaviate backup:
    restoring it would clash with the live registry. The registry entries of the backed-up
    collections are written next to it instead (ID.stitcher.json) and registered on restore.

    Raises:
        UsageError: The id is not one Weaviate accepts, or a backup with it exists.
        CollectionMissing: A named collection does not exist.
        ServerError: The server refused or failed the backup.
    """
    _check_backup_id(backup_id)
    if (backups_dir / backup_id).exists():
        raise UsageError(f"backup {backup_id!r} exists in {backups_dir}: choose another id")
    names = _backup_collections(server, collections)
    sidecar = {name: server.store(name).source_roots() for name in names}
    # Backups are the server's own business (its filesystem backend, all collections at once),
    # not a collection's: no store has them, so they go to the server.
    result = _backup_call("back up", backups_dir, lambda: server.backup(backup_id, names))
    _require_success("backup", backup_id, result)
    (backups_dir / f"{backup_id}.stitcher.json").write_text(
        json.dumps({"format": "stitcher-backup", "version": 1, "sources": sidecar}, indent=2),
        encoding="utf-8",
    )
    return BackupReport(backup_id, tuple(names), str(backups_dir / backup_id))


def restore_local(
    server: StoreServer, backup_id: str, collections: list[str] | None, backups_dir: Path
) -> BackupReport:
    """Restore collections (all in the backup when none are named) and their sources.

    Raises:
        UsageError: No such backup, or a collection to restore exists (drop it first).
        ServerError: The server refused or failed the restore.
    """
    _check_backup_id(backup_id)
    if not (backups_dir / backup_id).is_dir():
        known = (
            sorted(p.name for p in backups_dir.iterdir() if p.is_dir())
            if backups_dir.is_dir()
            else []
        )
        raise UsageError(
            f"no backup {backup_id!r} in {backups_dir}; backups: {', '.join(known) or 'none'}"
        )
    sidecar_path = backups_dir / f"{backup_id}.stitcher.json"
    sources: dict[str, dict[str, str]] = {}
    if sidecar_path.is_file():
        sources = json.loads(sidecar_path.read_text(encoding="utf-8")).get("sources", {})
    wanted = collections or list(sources)
    existing = [name for name in wanted if server.store(name).exists()]
    if existing:
        raise UsageError(
            f"collection {existing[0]!r} exists: a restore never overwrites; drop it first "
            f"(`stitcher drop -c {existing[0]} --yes`) or restore into another server"
        )
    result = _backup_call(
        "restore", backups_dir, lambda: server.restore(backup_id, collections or None)
    )
    _require_success("restore", backup_id, result)
    restored = tuple(result.collections or wanted)
    for name in restored:
        store = server.store(name)
        for source, root in sorted(sources.get(name, {}).items()):
            store.register_source(source, root)
    return BackupReport(backup_id, restored, str(backups_dir / backup_id))


def _check_backup_id(backup_id: str) -> None:
    if not _BACKUP_ID.fullmatch(backup_id):
        raise UsageError(
            f"backup id {backup_id!r}: use lowercase letters, digits, - and _ (at most 64), "
            "e.g. 2026-12-03"
        )


def _backup_collections(server: StoreServer, collections: list[str] | None) -> list[str]:
    if not collections:
        names = server.collection_names()
        if not names:
            raise UsageError("the local server has no collections to back up")
        return names
    names = [canonical_collection_name(name) for name in collections]
    for name in names:
        if not server.store(name).exists():
            raise CollectionMissing(f"collection {name!r} does not exist on the local server")
    return names


def _backup_call(
    doing: str, backups_dir: Path, action: Callable[[], BackupOutcome]
) -> BackupOutcome:
    try:
        return action()
    except Exception as error:
        detail = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        lower = detail.lower()
        if "filesystem" in lower and any(
            w in lower for w in ("not found", "not enabled", "module")
        ):
            raise ServerError(
                f"the local server cannot {doing} ({detail[:200]}): it was started before "
                "backups were enabled; run `stitcher server stop` and try again"
            ) from None
        raise ServerError(f"could not {doing} in {backups_dir}: {detail[:300]}") from None


def _require_success(doing: str, backup_id: str, result: BackupOutcome) -> None:
    status = result.status
    if status.upper() != "SUCCESS":
        error = result.error or "no reason given"
        raise ServerError(f"{doing} {backup_id} ended {status or 'unknown'}: {error}")

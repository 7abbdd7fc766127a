"""Writing chunks: batches re-sent under the same ids while the server's refusals may pass,
deletes of old versions, the incomplete-document records around them (stitcher.store.weaviate.
pending), and links from chunks to the organizations they mention.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from stitcher.errors import MetadataConflict, UsageError, WriteFailed
from stitcher.faults import classify, server_fault
from stitcher.graph.paths import MENTIONS, MENTIONS_REF
from stitcher.models import ChunkRecord, PendingDocument, WriteFailure
from stitcher.store.schema import plan_properties, record_to_properties
from stitcher.store.vectors import vector_name
from stitcher.store.weaviate.collection import CollectionSchema
from stitcher.store.weaviate.mentions import MentionLinker
from stitcher.store.weaviate.schema import IDS_PER_QUERY, MAX_RESULTS

# weaviate itself is imported inside the methods that use it: importing the client costs about
# a second, which `stitcher --help`, the pure tests and the in-memory store should not pay.


class Writes(CollectionSchema):
    """Inserting, replacing and deleting the collection's chunks."""

    def begin_documents(self, documents: Sequence[PendingDocument]) -> None:
        """Record these document versions as incomplete (stitcher.store.weaviate.pending), in one
        request, before any of their chunks is sent."""
        self._require()
        self._call("recording documents as being written", lambda: self._pending.begin(documents))

    def finish_documents(self, doc_ids: Sequence[str]) -> None:
        """These documents are complete (or gone): their incomplete records go, in one request."""
        self._call("recording documents as complete", lambda: self._pending.finish(doc_ids))

    def write(
        self, records: Sequence[ChunkRecord], vectors: Sequence[Sequence[float]]
    ) -> list[WriteFailure]:
        """Insert or replace `records` (same id replaces); returns what could not be stored.

        Objects refused for a reason that may pass (UNAVAILABLE, timeouts, 5xx) are re-sent
        under the same ids, with back-off and jitter (the retry policy); objects refused for
        good (validation, vector length) are returned at once, never dropped. A metadata value
        whose type does not fit its property fails its record without a request. Vectors may
        be float32 arrays. Not thread-safe: one writer at a time.

        Raises:
            ServerFault: The server stayed unreachable, or refuses every write (disk full,
                read-only) or no longer has stitcher's schema: nothing more can be written.
        """
        self._require()
        if len(records) != len(vectors):
            raise UsageError(f"write: {len(records)} records but {len(vectors)} vectors")
        extras = self._load_extras()
        self._add_missing_core_properties()
        planned = dict(extras)
        failures: list[WriteFailure] = []
        pending: dict[str, tuple[ChunkRecord, dict[str, Any], Sequence[float]]] = {}
        for record, vector in zip(records, vectors, strict=True):
            try:
                values, new = plan_properties(record, planned)
            except MetadataConflict as exc:
                failures.append(WriteFailure(record.id, record.doc_id, str(exc)))
                continue
            for extra in new:
                planned[extra.name] = extra
            pending[record.id] = (record, record_to_properties(record, values), vector)
        self._add_properties([planned[name] for name in planned if name not in extras])
        references = self._mention_references([item[0] for item in pending.values()])

        started = time.monotonic()
        delays = self._retry_policy.delays(self._rng)
        while pending:
            errors = self._send(pending, references)
            refused = {key: reason for key, reason in errors.items() if key in pending}
            pending = {key: pending[key] for key in refused}
            faults = {key: classify(reason) for key, reason in refused.items()}
            fatal = next((f for f in faults.values() if f.kind in ("read_only", "schema")), None)
            if fatal is not None:
                raise server_fault(fatal, url=self.url, doing="writing", collection=self._name)
            delay = next(delays, None) if any(f.transient for f in faults.values()) else None
            budget_left = self._retry_policy.total_seconds - (time.monotonic() - started)
            if delay is None or delay > budget_left:
                failures.extend(
                    WriteFailure(key, pending[key][0].doc_id, reason)
                    for key, reason in refused.items()
                )
                break
            # Only what may pass is re-sent; a refusal for good is final now.
            for key, fault in faults.items():
                if not fault.transient:
                    failures.append(WriteFailure(key, pending.pop(key)[0].doc_id, refused[key]))
            time.sleep(delay)
        return failures

    def delete_document(self, doc_id: str, keep_doc_hash: str | None = None) -> int:
        """Delete the document's chunks except those of version `keep_doc_hash`; returns count.

        With a version to keep, the old chunks are deleted by id, after reading each
        candidate's stored `doc_hash`: a `doc_hash != keep` filter is answered from one
        replica's inverted index, and on a replica still indexing the version just written it
        matched one of that version's own chunks (seen on a 3-node cluster at consistency ONE:
        the new version stored one chunk short). An object's stored properties are written
        whole, so what is read back decides, never the index alone.

        Raises:
            WriteFailed: The server reported objects it could not delete.
        """
        from weaviate.classes.query import Filter

        self._require()
        by_document = Filter.by_property("doc_id").equal(doc_id)
        if keep_doc_hash is None:
            deleted = self._delete_where(by_document, doc_id)
            self.finish_documents([doc_id])  # the whole document is gone
            return deleted
        candidates = by_document & Filter.by_property("doc_hash").not_equal(keep_doc_hash)
        deleted = 0
        while True:  # each listing returns at most MAX_RESULTS objects
            listed = self._call(
                "listing an old version",
                lambda: self._collection.query.fetch_objects(
                    filters=candidates, limit=MAX_RESULTS, return_properties=["doc_hash"]
                ),
            )
            stale = [
                str(obj.uuid)
                for obj in listed.objects
                if obj.properties.get("doc_hash") != keep_doc_hash
            ]
            if not stale:
                return deleted
            for begin in range(0, len(stale), IDS_PER_QUERY):
                ids = stale[begin : begin + IDS_PER_QUERY]
                deleted += self._delete_where(Filter.by_id().contains_any(ids), doc_id)

    def _delete_where(self, condition: Any, doc_id: str) -> int:
        """Delete every object matching `condition`, one server call per MAX_RESULTS objects."""
        deleted = 0
        while True:
            # verbose: the per-object errors tell a full disk (read-only shards) from a refusal
            # of one object, which the summary line must name differently.
            result = self._call(
                "deleting an old version",
                lambda: self._collection.data.delete_many(where=condition, verbose=True),
            )
            deleted += result.successful
            if result.failed:
                reasons = [obj.error for obj in result.objects if not obj.successful and obj.error]
                faults = [classify(reason) for reason in reasons]
                fatal = next((f for f in faults if f.kind in ("read_only", "schema")), None)
                if fatal is not None:
                    raise server_fault(fatal, url=self.url, doing="deleting", collection=self._name)
                because = f" ({reasons[0]})" if reasons else " (Weaviate's log has the reason)"
                raise WriteFailed(
                    f"could not delete {result.failed} chunks of {doc_id!r} from collection "
                    f"{self._name!r}{because}; run the command again"
                )
            if result.matches == 0 or result.successful == 0:
                return deleted

    def take_unresolved_mentions(self) -> dict[str, list[str]]:
        """Names in `mentions` that no organization has, by doc_id, since the last call.

        The names stay stored in the chunks' `mentions` property either way; `stitcher
        entities load` links them once an organization with that name or alias is loaded.
        """
        found = {doc_id: list(names) for doc_id, names in self._unresolved.items()}
        self._unresolved = {}
        return found

    def _mention_references(self, records: Sequence[ChunkRecord]) -> dict[str, list[str]]:
        """Object ids of the organizations each record's document mentions, by record id."""
        wanted = [r for r in records if r.metadata.get(MENTIONS)]
        if not wanted:
            return {}
        if self._linker is None:
            self._linker = MentionLinker(self._client, self._name)
            if self._linker.prepare():
                self._references.add(MENTIONS_REF)
        references: dict[str, list[str]] = {}
        for record in wanted:
            raw = record.metadata[MENTIONS]
            names = [raw] if isinstance(raw, str) else [str(name) for name in raw]
            ids, unresolved = self._linker.link(names)
            if ids:
                references[record.id] = ids
            if unresolved:
                self._unresolved.setdefault(record.doc_id, {}).update(dict.fromkeys(unresolved))
        return references

    def _send(
        self,
        pending: dict[str, tuple[ChunkRecord, dict[str, Any], Sequence[float]]],
        references: dict[str, list[str]] | None = None,
    ) -> dict[str, str]:
        """One pass of batch requests; returns {id: reason} for the objects not stored.

        Uses `data.insert_many` (the same gRPC batch endpoint as `collection.batch`) because it
        answers synchronously with per-object errors: the batch context manager waits about a
        second before sending a partial batch, which for a small document costs more than the
        write itself. A request that fails as a whole (timeout, connection) is re-sent under
        the same ids by `_call`: whether it landed is unknown, and re-sending replaces.
        """
        from weaviate.classes.data import DataObject
        from weaviate.exceptions import WeaviateInsertManyAllFailedError

        collection = self._collection
        references = references or {}
        layout = self._vector_layout()
        items = list(pending.items())
        errors: dict[str, str] = {}
        for begin in range(0, len(items), self._batch_size):
            group = items[begin : begin + self._batch_size]
            objects = [
                DataObject(
                    properties=properties,
                    uuid=object_id,
                    # Kept as float32 arrays until here: one list per request, not per corpus.
                    vector=_named(vector_name(layout, record.text), _as_list(vector)),
                    references={MENTIONS_REF: references[object_id]}
                    if object_id in references
                    else None,
                )
                for object_id, (record, properties, vector) in group
            ]

            def insert(objects: list[DataObject[Any, Any]] = objects) -> Any:
                # Every object refused is an answer, not a failed request: each object's
                # reason decides (in write) whether it is sent again.
                try:
                    return collection.data.insert_many(objects)
                except WeaviateInsertManyAllFailedError as exc:
                    return exc

            result = self._call("writing", insert)
            if isinstance(result, WeaviateInsertManyAllFailedError):
                errors.update((object_id, _reason(result)) for object_id, _item in group)
                continue
            for index, failed in result.errors.items():
                errors[group[index][0]] = failed.message
        return errors


def _reason(exc: Exception) -> str:
    # "Every object failed during insertion. Here is the set of all errors: <reasons>"
    message = str(exc)
    marker = "set of all errors: "
    return message.split(marker, 1)[1].strip() if marker in message else message


def _named(name: str | None, vector: list[float]) -> list[float] | dict[str, list[float]]:
    """The object's vector as the client takes it: unnamed, or under its part's name."""
    return vector if name is None else {name: vector}


def _as_list(vector: Sequence[float]) -> list[float]:
    tolist = getattr(vector, "tolist", None)  # a numpy array
    return tolist() if callable(tolist) else [float(x) for x in vector]

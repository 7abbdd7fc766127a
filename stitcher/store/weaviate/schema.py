"""How stitcher's collections look in Weaviate: the chunk collection's properties, the small
bookkeeping collections (leases, the source registry), and the server limits they are built around.

The backend-neutral half of the layout (property names for metadata keys, values to store,
settings in the description) is stitcher.store.schema; this module holds what needs the client's
configuration classes, which it imports inside each function (the client is slow to import).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

# Re-exported from where it was defined before stitcher.locks needed it without the store.
from stitcher.bookkeeping import bookkeeping_uuid as bookkeeping_uuid
from stitcher.models import VECTOR_INDEX_FLAT, VECTOR_INDEX_HNSW
from stitcher.store.schema import ExtraProperty, Kind
from stitcher.store.vectors import vector_names

# weaviate is imported inside the functions that use it: importing the client costs about a
# second, which the pure tests and the in-memory store should not pay.
if TYPE_CHECKING:
    import weaviate
    from weaviate.collections.classes.config import Property

#: The server refuses limit/offset windows beyond this (QUERY_MAXIMUM_RESULTS) and deletes at
#: most this many objects per delete_many call.
MAX_RESULTS = 10_000
#: Ids per `Filter.by_id().contains_any` request (fetches, deletes by id).
IDS_PER_QUERY = 500
#: Replicas a new collection gets on a cluster unless --replication-factor says otherwise.
DEFAULT_CLUSTER_REPLICATION = 3


def vector_index_for(index: str) -> Any:
    """The vector index config of a new collection whose settings record `index`: flat (exact)
    for VECTOR_INDEX_FLAT, else None (Weaviate's HNSW with its defaults). Which models need the
    exact one, and why, is stitcher.embed.models.EXACT_INDEX_ENGINES'."""
    if index == VECTOR_INDEX_HNSW:
        return None
    if index != VECTOR_INDEX_FLAT:
        raise ValueError(f"unknown vector index {index!r}")
    from weaviate.classes.config import Configure

    return Configure.VectorIndex.flat()


def vector_config_for(vectors: str, index: str) -> Any:
    """The vector config of a new collection whose settings record the layout `vectors` and the
    index `index`: one unnamed self-provided vector, or one named self-provided vector per part
    of a by-script model (stitcher.store.vectors), each with its own index."""
    from weaviate.classes.config import Configure

    names = vector_names(vectors)
    if not names:
        return Configure.Vectors.self_provided(vector_index_config=vector_index_for(index))
    return [
        Configure.Vectors.self_provided(
            name=name,
            vector_index_config=vector_index_for(index) or Configure.VectorIndex.hnsw(),
        )
        for name in names
    ]


def has_property(collection: Any, name: str) -> bool:
    return any(prop.name == name for prop in collection.config.get().properties)


def ensure_text_property(collection: Any, name: str) -> None:
    """Add a whole-value text property to a bookkeeping collection made before it was needed."""
    from weaviate.classes.config import DataType, Property, Tokenization
    from weaviate.exceptions import UnexpectedStatusCodeError

    if has_property(collection, name):
        return
    try:
        collection.config.add_property(
            Property(
                name=name,
                data_type=DataType.TEXT,
                tokenization=Tokenization.FIELD,
                index_searchable=False,
            )
        )
    except UnexpectedStatusCodeError:
        # Another writer may have added it meanwhile; fail only if it is still missing.
        if not has_property(collection, name):
            raise


def ensure_bookkeeping_collection(
    client: weaviate.WeaviateClient, name: str, description: str, kinds: dict[str, str]
) -> None:
    """Create a small collection without vectors for stitcher's own records, unless it exists.

    `kinds` maps property names to "text" (matched as a whole value), "int" or "date".
    """
    from weaviate.classes.config import (
        Configure,
        DataType,
        Property,
        ReplicationDeletionStrategy,
        Tokenization,
    )
    from weaviate.exceptions import UnexpectedStatusCodeError

    if client.collections.exists(name):
        return
    # Leases and the source registry must survive a node loss like the chunks do: replicated
    # on every node up to three (on one node: not at all).
    factor = min(DEFAULT_CLUSTER_REPLICATION, max(1, len(client.cluster.nodes())))
    replication = Configure.replication(
        factor=factor,
        deletion_strategy=ReplicationDeletionStrategy.TIME_BASED_RESOLUTION,
    )
    types = {"int": DataType.INT, "date": DataType.DATE}
    properties = [
        Property(
            name=prop,
            data_type=DataType.TEXT,
            tokenization=Tokenization.FIELD,
            index_searchable=False,
        )
        if kind == "text"
        else Property(name=prop, data_type=types[kind])
        for prop, kind in kinds.items()
    ]
    try:
        client.collections.create(
            name, description=description, properties=properties, replication_config=replication
        )
    except UnexpectedStatusCodeError:
        # Two machines creating it at once: the other one won, which is just as good.
        if not client.collections.exists(name):
            raise


def core_properties() -> list[Property]:
    from weaviate.classes.config import DataType, Property, Tokenization

    def exact(name: str) -> Property:
        # Matched as a whole value in filters; never part of BM25.
        return Property(
            name=name,
            data_type=DataType.TEXT,
            tokenization=Tokenization.FIELD,
            index_filterable=True,
            index_searchable=False,
        )

    def stored_only(name: str) -> Property:
        # Returned with a hit for stitching; never searched or filtered.
        return Property(
            name=name,
            data_type=DataType.TEXT,
            index_filterable=False,
            index_searchable=False,
        )

    def integer(name: str) -> Property:
        # The range index makes `start < hi AND end > lo` cheap in fetch_spans.
        return Property(name=name, data_type=DataType.INT, index_range_filters=True)

    return [
        Property(name="text", data_type=DataType.TEXT, tokenization=Tokenization.WORD),
        Property(
            name="text_seg",
            data_type=DataType.TEXT,
            tokenization=Tokenization.WHITESPACE,
            index_searchable=True,
            index_filterable=False,
        ),
        exact("doc_id"),
        exact("doc_hash"),
        exact("chunk_hash"),
        exact("source"),
        exact("rules"),
        exact("lang"),
        Property(name="title", data_type=DataType.TEXT, tokenization=Tokenization.WORD),
        Property(name="parent_id", data_type=DataType.UUID),
        integer("chunk_index"),
        integer("start"),
        integer("end"),
        integer("doc_length"),
        Property(name="starts_sentence", data_type=DataType.BOOL),
        Property(name="ends_sentence", data_type=DataType.BOOL),
        *(stored_only(name) for name in ("context_before", "context_after", "context_chunks")),
        integer("page"),
        integer("line"),
        Property(name="date", data_type=DataType.DATE, index_range_filters=True),
        Property(
            name="tags",
            data_type=DataType.TEXT_ARRAY,
            tokenization=Tokenization.FIELD,
            index_searchable=False,
        ),
    ]


def extra_property(extra: ExtraProperty) -> Property:
    from weaviate.classes.config import DataType, Property, Tokenization

    types = {
        "text": DataType.TEXT,
        "int": DataType.INT,
        "number": DataType.NUMBER,
        "bool": DataType.BOOL,
        "date": DataType.DATE,
        "text[]": DataType.TEXT_ARRAY,
    }
    data_type = types[extra.kind]
    if data_type in (DataType.TEXT, DataType.TEXT_ARRAY):
        return Property(
            name=extra.name,
            description=extra.key,
            data_type=data_type,
            tokenization=Tokenization.FIELD,
            index_searchable=False,
        )
    return Property(
        name=extra.name,
        description=extra.key,
        data_type=data_type,
        index_range_filters=data_type in (DataType.INT, DataType.NUMBER, DataType.DATE),
    )


def kind_of_property(data_type: str, tokenization: Any) -> Kind | None:
    token = str(getattr(tokenization, "value", tokenization) or "")
    kinds: dict[str, Kind] = {
        "int": "int",
        "number": "number",
        "boolean": "bool",
        "date": "date",
        "uuid": "uuid",
        "text[]": "text[]",
    }
    if data_type == "text":
        return "word" if token == "word" else "text"
    return kinds.get(data_type)

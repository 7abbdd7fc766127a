"""LangChain integration: a retriever and an agent tool over stitched hybrid search.

This is the one module of stitcher that imports LangChain (langchain_core, pydantic), so the CLI
and the core library never pay for it. Use it through `Stitcher.as_retriever()` or directly::

    from stitcher.langchain import StitchedRetriever, stitched_search_tool

    retriever = StitchedRetriever(collection="Docs", k=5, where=["tags=policy"])
    docs = retriever.invoke("remote work")           # Documents holding whole sentences
    tool = retriever.as_tool()                       # StructuredTool for an agent

Why the tool has one typed argument per field (``tags``, ``date_min``, ``date_max``, ...) rather
than only a list of filter expressions: function-calling models fill named, typed arguments
reliably, and the JSON schema itself tells them which fields exist and what values look like —
there is no grammar to get wrong and nothing to quote. Ranges become ``<field>_min`` /
``<field>_max`` (inclusive; a date may be a bare year or month, so "in 2021" is simply
``date_min="2021", date_max="2021"``). A ``filters`` list of ``--where`` expressions remains for
what typed arguments cannot say (``!=``, ``~`` contains).
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from typing import Any, Literal

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    SecretStr,
    ValidationError,
    create_model,
    field_validator,
    model_validator,
)

from stitcher.config import DEFAULT_COLLECTION
from stitcher.errors import FilterError, StitcherError, UsageError
from stitcher.filters import Condition, Where
from stitcher.graph import AmbiguousEntity, news_conditions
from stitcher.graph.model import MENTIONED_KIND
from stitcher.ids import canonical_collection_name, source_of
from stitcher.models import Passage
from stitcher.request import SearchRequest
from stitcher.session import Session
from stitcher.session import as_where as parse_where_argument
from stitcher.store.schema import parse_date
from stitcher.where import parse_condition

#: Most passages one tool call may ask for: more only floods the agent's context.
MAX_TOOL_LIMIT = 20

#: Fields an agent has no use for: chunk positions and the chunk text (that is what `query` is).
HIDDEN_TOOL_FIELDS = frozenset({"text", "chunk_index", "start", "end"})

#: The tool's own arguments; a collection field with one of these names gets a prefix.
RESERVED_ARGUMENTS = frozenset({"query", "latest", "limit", "filters"})

#: Retriever keyword arguments `invoke(query, **kwargs)` understands.
INVOKE_ARGUMENTS = ("k", "alpha", "where", "latest")

_ISO_PREFIX = re.compile(r"(\d{4})(?:-(\d{1,2})(?:-(\d{1,2}))?)?")
_ARGUMENT_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_]{0,59}")


# -- documents ---------------------------------------------------------------------------------


def passage_document(passage: Passage) -> Document:
    """A search result as a LangChain Document.

    `page_content` is the stitched passage; metadata holds source (the source name, as in
    `--where source=`), path (the file), doc_id, start, end, score,
    hit_ids, chunk_ids and truncated, plus the document's own metadata (title, date, tags, ...)
    as JSON values: dates become ISO-8601 strings, tuples lists.
    """
    metadata: dict[str, Any] = {
        "source": source_of(passage.doc_id),
        "path": passage.source,
        "doc_id": passage.doc_id,
        "start": passage.start,
        "end": passage.end,
        "score": passage.score,
        "hit_ids": list(passage.hit_ids),
        "chunk_ids": list(passage.chunk_ids),
        "truncated": passage.truncated,
    }
    for key, value in passage.metadata.items():
        # The passage's own fields win over a front-matter key of the same name.
        metadata.setdefault(key, _json_value(value))
    return Document(page_content=passage.text, metadata=metadata)


def _json_value(value: Any) -> Any:
    if isinstance(value, (datetime, date)):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return [_json_value(item) for item in value]
    return value


def format_documents(documents: Sequence[Document]) -> str:
    """Numbered passages with file, title and date, as an agent or a prompt reads them (the file
    path, which an answer can cite; documents from elsewhere give their `source`)."""
    blocks = []
    for number, document in enumerate(documents, 1):
        meta = document.metadata
        head = [f"[{number}] {meta.get('path') or meta.get('source', '?')}"]
        if meta.get("title"):
            head.append(f"title: {meta['title']}")
        if meta.get("date"):
            head.append(f"date: {str(meta['date'])[:10]}")
        if meta.get("tags"):
            head.append("tags: " + ", ".join(str(tag) for tag in meta["tags"]))
        blocks.append(" | ".join(head) + "\n" + document.page_content.strip())
    return "\n\n".join(blocks)


# -- retriever ---------------------------------------------------------------------------------


class StitchedRetriever(BaseRetriever):
    """Hybrid search over a stitcher collection; every Document is whole sentences.

    Give it a `Stitcher` (what `Stitcher.as_retriever()` does), or `collection` (and `url`,
    `api_key`) to open its own connection on first use.

    `close()`, or leaving a `with` block, closes the connection it searches through (a given
    `Stitcher` connects again if used later). One never closed is closed when it is collected
    or at exit (the session's finalizer), so a script that forgets gets no ResourceWarning.

    `invoke(query, k=..., alpha=..., where=..., latest=...)` overrides the settings for one call.
    An empty query returns the newest documents (by date) that pass the filter.

    Args:
        stitcher: an open `Stitcher`; the caller keeps ownership.
        collection: collection to search when no `stitcher` is given (default "Stitcher").
        url: Weaviate URL when no `stitcher` is given (None: the local server).
        api_key: API key for `url`.
        k: how many passages to return.
        alpha: weight of the vector side: 1 vector only, 0 keyword (BM25) only; None (the
            default) chooses it from the query and the model, as the CLI does
            (stitcher.fusion.effective_alpha).
        where: filter applied inside Weaviate before ranking: a `Where`, or --where
            expressions such as ``["tags=policy", "date>=2021-01-01"]`` (all must hold).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    stitcher: Session | None = Field(default=None, exclude=True, repr=False)
    collection: str | None = None
    url: str | None = None
    api_key: SecretStr | None = Field(default=None, repr=False)
    k: int = Field(default=5, ge=1)
    alpha: float | None = Field(default=None, ge=0.0, le=1.0)
    where: Where | None = None

    _owned: Session | None = PrivateAttr(default=None)
    _lock: threading.Lock = PrivateAttr(default_factory=threading.Lock)
    _warm: bool = PrivateAttr(default=False)

    @field_validator("where", mode="before")
    @classmethod
    def _parse_where(cls, value: Any) -> Any:
        # FilterError is not a ValueError, so a malformed expression surfaces as itself, with
        # the grammar in its message, instead of being wrapped into a ValidationError.
        return as_where(value)

    @model_validator(mode="after")
    def _one_connection(self) -> StitchedRetriever:
        if self.stitcher is not None and (self.url is not None or self.api_key is not None):
            raise ValueError("pass either `stitcher` or `url`/`api_key`, not both")
        if (
            self.stitcher is not None
            and self.collection is not None
            and canonical_collection_name(self.collection) != self.stitcher.collection
        ):
            raise ValueError(
                f"collection {self.collection!r} differs from the stitcher's "
                f"{self.stitcher.collection!r}: leave `collection` out"
            )
        return self

    def get_stitcher(self) -> Session:
        """The `Stitcher` searched: the one given, else this retriever's own (opened once)."""
        if self.stitcher is not None:
            return self.stitcher
        with self._lock:
            if self._owned is None:
                key = self.api_key.get_secret_value() if self.api_key else None
                # Its connection is closed by close(), or by the session's finalizer.
                self._owned = Session(self.url, key, self.collection or DEFAULT_COLLECTION)
            return self._owned

    def close(self) -> None:
        """Close the connection: this retriever's own, or the given `stitcher`'s (which
        connects again when it is used later)."""
        with self._lock:
            if self._owned is not None:
                self._owned.close()
                self._owned = None
        if self.stitcher is not None:
            self.stitcher.close()

    def __enter__(self) -> StitchedRetriever:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def search(
        self,
        query: str,
        *,
        k: int | None = None,
        alpha: float | None = None,
        where: Where | Sequence[str] | str | None = None,
        latest: bool = False,
    ) -> list[Document]:
        """The blocking search behind `invoke`: `where` is ANDed with the retriever's filter."""
        extra = as_where(where)
        combined = self.where or Where()
        if extra:
            if combined.any_of and extra.any_of:
                raise UsageError("the retriever's filter has an any-of group already")
            combined = Where(combined.all_of + extra.all_of, combined.any_of + extra.any_of)
        request = SearchRequest(
            query=query,
            limit=self.k if k is None else k,
            alpha=self.alpha if alpha is None else alpha,
            where=combined or None,
            latest=latest,
        )
        stitcher = self.get_stitcher()
        if self._warm:
            passages = stitcher.run(request).passages
        else:
            # The first search connects and loads the query model: two threads (ainvoke,
            # batch) doing it at once would open two clients and load the model twice.
            with self._lock:
                passages = stitcher.run(request).passages
                self._warm = True
        return [passage_document(passage) for passage in passages]

    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun,
        **kwargs: Any,
    ) -> list[Document]:
        return self.search(query, **_invoke_arguments(kwargs))

    async def _aget_relevant_documents(
        self,
        query: str,
        *,
        run_manager: AsyncCallbackManagerForRetrieverRun,
        **kwargs: Any,
    ) -> list[Document]:
        arguments = _invoke_arguments(kwargs)
        # The Weaviate client and the embedder block: run them off the event loop.
        return await asyncio.to_thread(self.search, query, **arguments)

    def as_tool(
        self,
        args_schema: type[BaseModel] | None = None,
        *,
        name: str | None = None,
        description: str | None = None,
        arg_types: dict[str, type] | None = None,
    ) -> BaseTool:
        """An agent tool with one typed argument per filterable field (`stitched_search_tool`).

        With `args_schema` or `arg_types`, LangChain's generic Runnable tool instead.
        """
        if args_schema is not None or arg_types is not None:
            return super().as_tool(
                args_schema, name=name, description=description, arg_types=arg_types
            )
        return stitched_search_tool(self, name=name, description=description)


def _invoke_arguments(kwargs: Mapping[str, Any]) -> dict[str, Any]:
    # LangChain forwards every invoke() keyword; `verbose` is its own, anything else unknown
    # would be silently ignored, which for a filter means wrong results.
    unknown = sorted(set(kwargs) - set(INVOKE_ARGUMENTS) - {"verbose"})
    if unknown:
        raise TypeError(
            f"unexpected search argument(s) {', '.join(unknown)}; "
            f"accepted: {', '.join(INVOKE_ARGUMENTS)}"
        )
    return {name: kwargs[name] for name in INVOKE_ARGUMENTS if name in kwargs}


def as_where(where: Where | Sequence[str] | str | None) -> Where | None:
    """A `Where` from --where expressions (all must hold), or the `Where` itself."""
    strings = isinstance(where, Sequence) and all(isinstance(item, str) for item in where)
    if where is None or isinstance(where, Where) or strings:
        return parse_where_argument(where)
    raise FilterError(
        f"where must be a Where or a list of expressions like 'tags=policy', not {where!r}"
    )


# -- agent tool --------------------------------------------------------------------------------


Role = Literal["match", "min", "max", "graph"]


@dataclass(frozen=True)
class ToolArgument:
    """How one tool argument becomes a filter condition on `field`."""

    field: str
    kind: str
    role: Role


def stitched_search_tool(
    source: Session | StitchedRetriever,
    *,
    name: str | None = None,
    description: str | None = None,
    fields: Sequence[Any] | None = None,
) -> StructuredTool:
    """A LangChain tool for agents: search with typed metadata filters, read numbered passages.

    The argument schema is built from the collection's fields (`Stitcher.fields()`): text
    fields take a value or a list (any of them), numbers and dates `<field>_min` /
    `<field>_max` (inclusive), booleans true/false; plus `query` (empty: the newest
    documents), `latest`, `limit` and `filters` (--where expressions). Bad arguments come back
    to the agent as a one-line message, not an exception.

    Args:
        source: a `Stitcher`, or a `StitchedRetriever` whose k, alpha and filter are kept
            (the agent's filters are ANDed with the retriever's).
        name: tool name (default ``search_<collection>``).
        description: tool description (default: says what the collection holds and how to
            filter).
        fields: the fields to offer (objects with name, kind, examples); default: all the
            collection's fields except chunk positions.
    """
    retriever = (
        source if isinstance(source, StitchedRetriever) else StitchedRetriever(stitcher=source)
    )
    stitcher = retriever.get_stitcher()
    offered = [
        f
        for f in (fields if fields is not None else stitcher.fields())
        if f.name not in HIDDEN_TOOL_FIELDS
    ]
    graph = _has_graph(stitcher)
    schema, arguments = build_args_schema(offered, default_limit=retriever.k, graph=graph)
    tool_name = name or _tool_name(stitcher.collection)
    known_fields = {f.name: f.kind for f in offered}

    def run(**given: Any) -> str:
        try:
            query = str(given.get("query") or "").strip()
            where = tool_where(given, arguments, known_fields)
            if graph:
                where = where.and_(*_graph_conditions(stitcher, given, arguments))
            documents = retriever.search(
                query,
                k=int(given.get("limit") or retriever.k),
                where=where,
                latest=bool(given.get("latest")) or not query,
            )
        except AmbiguousEntity as error:
            # Seed 000's follow-up question, for the agent to put to the user.
            return (
                "Ask a follow up question which of the available organizations did the user "
                f"mean. Available options: {', '.join(error.candidates)}"
            )
        except StitcherError as error:
            raise ToolException(f"Error: {error}") from None
        return _tool_answer(documents, retriever.where, where)

    async def arun(**given: Any) -> str:
        return await asyncio.to_thread(run, **given)

    tool = StitchedSearchTool.from_function(
        func=run,
        coroutine=arun,
        name=tool_name,
        description=description or _tool_description(stitcher.collection, offered),
        args_schema=schema,
        handle_tool_error=True,
        handle_validation_error=_validation_message(schema),
    )
    tool._retriever = retriever
    return tool


class StitchedSearchTool(StructuredTool):
    """The agent tool of `stitched_search_tool`: a StructuredTool that can close its
    connection (`close()` or a `with` block), like its retriever."""

    _retriever: StitchedRetriever | None = PrivateAttr(default=None)

    def close(self) -> None:
        """Close the connection the tool searches through (see `StitchedRetriever.close`)."""
        if self._retriever is not None:
            self._retriever.close()

    def __enter__(self) -> StitchedSearchTool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _has_graph(stitcher: Session) -> bool:
    """Whether organizations are loaded for this collection (`stitcher entities load`)."""
    return stitcher.store.entities().exists(MENTIONED_KIND)


def _graph_conditions(
    stitcher: Session, given: Mapping[str, Any], arguments: Mapping[str, ToolArgument]
) -> tuple[Condition, ...]:
    """Seed 000's NewsInput arguments (organization, country, sentiment) as conditions."""
    values = {
        spec.field: given.get(argument)
        for argument, spec in arguments.items()
        if spec.role == "graph" and given.get(argument)
    }
    return news_conditions(stitcher.store.entities(), **values)


def build_args_schema(
    fields: Sequence[Any], *, default_limit: int = 5, graph: bool = False
) -> tuple[type[BaseModel], dict[str, ToolArgument]]:
    """The tool's pydantic argument model, and how each filter argument maps to its field.

    Args:
        fields: objects with `name`, `kind` ("text", "word", "text[]", "int", "number", "date",
            "bool", "uuid") and `examples`.
        default_limit: the default of `limit`.
        graph: also offer seed 000's `organization`, `country` and `sentiment` arguments,
            which filter through the organizations each passage mentions.
    """
    definitions: dict[str, Any] = {
        "query": (
            str | None,
            Field(
                default=None,
                description=(
                    "What to look for, in the user's words, without the conditions that "
                    "filter arguments express (a place, a date range, a tag). Leave it empty "
                    "to list the newest documents that pass the filters."
                ),
            ),
        ),
    }
    arguments: dict[str, ToolArgument] = {}
    taken = set(RESERVED_ARGUMENTS)
    for field in fields:
        base = _argument_name(field.name, taken)
        examples = _examples(field)
        label = field.name if base == field.name else f"{field.name!r}"
        if field.kind in ("text", "word", "text[]", "uuid"):
            if field.kind == "text[]":
                text = f"Only documents whose {label} include this value"
            elif field.kind == "word":
                text = f"Only documents whose {label} has these words"
            else:
                text = f"Only documents whose {label} is exactly this value"
            definitions[base] = (
                str | list[str] | None,
                Field(default=None, description=f"{text} (a list: any of them).{examples}"),
            )
            arguments[base] = ToolArgument(field.name, field.kind, "match")
            taken.add(base)
        elif field.kind in ("int", "number", "date"):
            value_type: Any = {"int": int, "number": float, "date": str}[field.kind]
            for role in ("min", "max"):
                argument = f"{base}_{role}"
                definitions[argument] = (
                    value_type | None,
                    Field(
                        default=None,
                        description=_range_description(label, field.kind, role) + examples,
                    ),
                )
                arguments[argument] = ToolArgument(field.name, field.kind, role)
                taken.add(argument)
        elif field.kind == "bool":
            definitions[base] = (
                bool | None,
                Field(default=None, description=f"Only documents whose {label} is true/false."),
            )
            arguments[base] = ToolArgument(field.name, field.kind, "match")
            taken.add(base)
    if graph:
        for key, description in GRAPH_ARGUMENTS.items():
            argument = _argument_name(key, taken)
            kind: Any = Literal["positive", "negative"] if key == "sentiment" else str
            definitions[argument] = (kind | None, Field(default=None, description=description))
            arguments[argument] = ToolArgument(key, "text", "graph")
            taken.add(argument)
    names = ", ".join(f"{f.name} ({f.kind})" for f in fields)
    definitions["filters"] = (
        list[str] | None,
        Field(
            default=None,
            description=(
                "Extra conditions the arguments above cannot express, one per item, all must "
                "hold: field=value, field=a,b (any of), field!=value, field>=value, "
                "field>value, field<=value, field<value, field~text (contains). "
                f"Fields: {names}."
            ),
        ),
    )
    definitions["latest"] = (
        bool,
        Field(
            default=False,
            description="Newest documents first (by date) instead of the "
            "best matches for the query.",
        ),
    )
    definitions["limit"] = (
        int,
        Field(
            default=min(default_limit, MAX_TOOL_LIMIT),
            ge=1,
            le=MAX_TOOL_LIMIT,
            description="How many passages to return.",
        ),
    )
    schema = create_model(
        "StitchedSearchInput",
        __config__=ConfigDict(extra="forbid"),
        **definitions,
    )
    return schema, arguments


def _range_description(label: str, kind: str, role: str) -> str:
    if kind != "date":
        bound = "Smallest" if role == "min" else "Largest"
        return f"{bound} {label} to include (inclusive)."
    if role == "min":
        return (
            f"Earliest {label} to include: YYYY, YYYY-MM or YYYY-MM-DD (a year or month "
            "means its first day)."
        )
    return (
        f"Latest {label} to include: YYYY, YYYY-MM or YYYY-MM-DD (a year or month means all "
        f"of it, so {label}_min=2021 with {label}_max=2021 is the year 2021)."
    )


def _examples(field: Any) -> str:
    examples = [str(e) for e in getattr(field, "examples", ()) if str(e)]
    if not examples:
        return ""
    if field.kind == "date":
        examples = [e[:10] for e in examples]
    return " Examples: " + ", ".join(repr(e) for e in examples) + "."


def _argument_name(field: str, taken: set[str]) -> str:
    """A safe argument name: [A-Za-z][A-Za-z0-9_]* (some model APIs accept nothing else)."""
    name = field
    if not _ARGUMENT_NAME.fullmatch(name):
        cleaned = re.sub(r"[^A-Za-z0-9_]", "_", field).strip("_")[:40]
        digest = hashlib.sha256(field.encode("utf-8")).hexdigest()[:6]
        name = f"field_{cleaned}_{digest}" if cleaned else f"field_{digest}"
        name = re.sub(r"_+", "_", name)
    if name in taken:
        name = f"field_{name}"
    return name


#: Seed 000's NewsInput, mapped to reference filters (stitcher.graph.news_conditions).
GRAPH_ARGUMENTS = {
    "organization": (
        "Only passages that mention this organization (name or alias, e.g. a Chinese name). "
        "If it fits several organizations the tool asks which one was meant."
    ),
    "country": (
        "Only passages that mention an organization based in this country (full English "
        "name, e.g. France)."
    ),
    "sentiment": "Only clearly positive (> 0.5) or negative (< -0.5) documents.",
}


def tool_where(
    given: Mapping[str, Any], arguments: Mapping[str, ToolArgument], known_fields: Mapping[str, str]
) -> Where:
    """The filter the tool's arguments ask for; FilterError names the bad argument."""
    conditions: list[Condition] = []
    for argument, value in given.items():
        spec = arguments.get(argument)
        if spec is None or value is None or spec.role == "graph":
            continue  # graph arguments become reference filters in _graph_conditions
        if spec.role == "match":
            if isinstance(value, list):
                values = tuple(str(v) for v in value if str(v).strip())
                if values:
                    conditions.append(Condition(spec.field, "any", values))
            elif isinstance(value, bool):
                conditions.append(Condition(spec.field, "eq", value))
            elif str(value).strip():
                conditions.append(Condition(spec.field, "eq", str(value).strip()))
        elif spec.kind == "date":
            conditions.append(
                date_bound(spec.field, str(value), upper=spec.role == "max", argument=argument)
            )
        else:
            conditions.append(Condition(spec.field, "ge" if spec.role == "min" else "le", value))
    for expression in given.get("filters") or ():
        condition = parse_condition(expression)
        if condition.field not in known_fields:
            raise FilterError(
                f"unknown field {condition.field!r} in filter {expression!r}; fields: "
                + ", ".join(known_fields)
            )
        raw = condition.value if isinstance(condition.value, str) else ""
        if raw[:1] in ("=", ">", "<", "!", "~"):
            raise FilterError(
                f"filter {expression!r} has an unknown operator; use one of "
                "= != > >= < <= ~ (e.g. date>=2021-01-01)"
            )
        conditions.append(condition)
    return Where(tuple(conditions))


def date_bound(field: str, text: str, *, upper: bool, argument: str | None = None) -> Condition:
    """A date limit as a condition: a year or month covers all of it.

    ``2021`` as a lower bound is ``>= 2021-01-01``; as an upper bound ``< 2022-01-01``.
    Full ISO-8601 datetimes are kept as they are. FilterError for anything else.
    """
    value = text.strip()
    match = _ISO_PREFIX.fullmatch(value)
    try:
        if match is None:
            parse_date(value)  # a full ISO datetime: validated here, compared as given
            return Condition(field, "le" if upper else "ge", value)
        year = int(match.group(1))
        month = int(match.group(2) or 1)
        day = int(match.group(3) or 1)
        start = datetime(year, month, day, tzinfo=timezone.utc)
    except ValueError:
        raise FilterError(
            f"{argument or field}={text!r} is not a date: write YYYY, YYYY-MM or YYYY-MM-DD "
            "(e.g. 2021 or 2021-03-15)"
        ) from None
    if not upper:
        return Condition(field, "ge", start.isoformat())
    if match.group(3):
        end = start + timedelta(days=1)
    elif match.group(2):
        end = start.replace(year=year + month // 12, month=month % 12 + 1)
    else:
        end = start.replace(year=year + 1)
    return Condition(field, "lt", end.isoformat())


def _tool_name(collection: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9_]", "_", collection).lower()
    return f"search_{cleaned}"[:64]


def _tool_description(collection: str, fields: Sequence[Any]) -> str:
    names = {f.name: f.kind for f in fields}
    example = ""
    tag = next((n for n, k in names.items() if k == "text[]"), None)
    when = next((n for n, k in names.items() if k == "date"), None)
    if tag and when:
        example = (
            f" Example: 'new policies introduced in 2021?' -> query='new policies', "
            f"{tag}='policy', {when}_min='2021', {when}_max='2021'."
        )
    return (
        f"Search the document collection {collection!r} (keyword + semantic search). Returns "
        "numbered passages of whole sentences with their source and date. Put the topic in "
        "`query` and every condition on metadata into the filter arguments; leave `query` "
        f"empty for the newest documents.{example}"
    )


def _tool_answer(documents: Sequence[Document], base: Where | None, asked: Where) -> str:
    conditions = (base.all_of if base else ()) + asked.all_of
    shown = ", ".join(_describe(c) for c in conditions)
    if not documents:
        hint = " Try fewer filters or other words." if conditions else " Try other words."
        return "No passages found" + (f" (filters: {shown})." if shown else ".") + hint
    head = f"{len(documents)} passage{'s' if len(documents) != 1 else ''}"
    if shown:
        head += f" (filters: {shown})"
    return head + ":\n\n" + format_documents(documents)


_SYMBOLS = {
    "eq": "=",
    "ne": "!=",
    "gt": ">",
    "ge": ">=",
    "lt": "<",
    "le": "<=",
    "contains": "~",
    "any": "=",
}


def _describe(condition: Condition) -> str:
    value = condition.value
    if isinstance(value, (tuple, list)):
        value = ",".join(str(v) for v in value)
    elif isinstance(value, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}T00:00:00\+00:00", value):
        value = value[:10]
    return f"{condition.field}{_SYMBOLS[condition.op]}{value}"


def _validation_message(schema: type[BaseModel]) -> Callable[[Any], str]:
    allowed = ", ".join(schema.model_fields)

    def message(error: Any) -> str:
        problems: list[str] = []
        if not isinstance(error, ValidationError):
            problems.append(str(error))
            return f"Error: {problems[0]}. Arguments: {allowed}."
        # One line per argument: a union (str or list) fails once per member, with its type
        # name in the location ("tags.str"), which would only confuse the reader.
        by_argument: dict[str, list[str]] = {}
        for item in error.errors():
            loc = item.get("loc", ())
            argument = str(loc[0]) if loc else "arguments"
            if item.get("type") == "extra_forbidden":
                problems.append(f"unknown argument {argument!r}")
                continue
            messages = by_argument.setdefault(argument, [])
            if item.get("msg") not in messages:
                messages.append(str(item.get("msg")))
        problems += [f"{name}: {' or '.join(msgs)}" for name, msgs in by_argument.items()]
        return f"Error: {'; '.join(problems)}. Arguments: {allowed}."

    return message

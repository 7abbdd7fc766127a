"""`SearchRequest`: one search, defined once and passed whole to every front end.

The CLI builds it from its flags, the warm worker receives it over its socket (`to_wire` /
`from_wire`, never a hand-kept dict), the Python API (`Stitcher.run`, `Stitcher.search`) and the
LangChain retriever and tool build it from their arguments. What a search is *against* — the
server, the collection, the tenant and the read consistency — is the session's business, not the
request's: one open session answers many requests.

This module imports only the standard library and stitcher's small modules (no client, no
model), since the CLI builds a request before it knows whether the warm worker answers it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from stitcher.config import DEFAULT_MAX_EXTEND
from stitcher.errors import UsageError, WireError, setting
from stitcher.filters import Condition, Where
from stitcher.store.base import FUSIONS

#: The request's wire format. Bump it whenever a field changes meaning or type (adding a field
#: with a default does not need it: an older worker then refuses the unknown field, see
#: `from_wire`, and the caller searches in-process).
WIRE_VERSION = 1


@dataclass(frozen=True)
class SqlJoin:
    """Narrow a search to the documents whose `join` field equals a value of the SQL's first
    column (seed 002's SQL-then-search)."""

    sql: str
    db: str
    join: str = "title"


@dataclass(frozen=True)
class SearchRequest:
    """One search; the defaults are the CLI's defaults.

    `alpha` None (the default everywhere, the LangChain retriever and tool included) lets
    stitcher.fusion.effective_alpha choose from the query and the model; `query` None (or
    `latest`) lists the newest documents that pass the filter.
    """

    query: str | None = None
    limit: int = 5
    alpha: float | None = None
    fusion: str = "relative"
    where: Where | None = None
    #: Newest documents by date instead of a ranked search.
    latest: bool = False
    #: Only the document this name matches (title, path or doc id; forgiving spelling).
    doc: str | None = None
    #: Only chunks mentioning this organization (needs `stitcher entities load`).
    org: str | None = None
    #: Only the documents a SQL query picks.
    sql: SqlJoin | None = None
    #: Must be the collection's model when given (it is checked, never switched to).
    model: str | None = None
    stitch: bool = True
    max_extend: int = DEFAULT_MAX_EXTEND
    #: Keep each passage's score explanation in the output (`--explain`).
    explain: bool = False
    #: Rank one-sided and bare-heading hits after the others (stitcher.fusion.demote_weak_hits).
    #: Off by default: on 300 benchmark questions (MiniLM, alpha 0.5) it removed every
    #: one-sided-over-two-sided inversion but lowered hit@5 (en 0.647→0.621, zh 0.530→0.485).
    demote_weak: bool = False
    #: Rank table-of-contents chunks after the others (stitcher.fusion.demote_contents_listings);
    #: BENCHMARKS.md "Issue 15, fourth round" has what it changes on the question benchmark.
    demote_listings: bool = True

    @property
    def lists_latest(self) -> bool:
        """Whether this request lists the newest documents rather than ranking by a query."""
        return self.latest or not (self.query and self.query.strip())

    def ranking(self, query: str) -> SearchRequest:
        """This request for another query, ranked by it (one line of `--queries`)."""
        return dataclasses.replace(self, query=query, latest=False)

    def validate(self) -> None:
        """Raise UsageError for values no query could use."""
        if self.limit < 1:
            raise UsageError(f"{setting('limit')} must be at least 1")
        if self.alpha is not None and not 0.0 <= self.alpha <= 1.0:
            raise UsageError(
                f"{setting('alpha')} must be between 0 (keyword only) and 1 (vector only)"
            )
        if self.fusion not in FUSIONS:
            raise UsageError(f"{setting('fusion')} must be one of {', '.join(FUSIONS)}")
        if self.max_extend < 0:
            raise UsageError(f"{setting('max_extend')} must not be negative")

    def to_wire(self) -> dict[str, Any]:
        """The request as JSON-ready data that `from_wire` turns back into an equal request."""
        return {"version": WIRE_VERSION, "request": _plain(dataclasses.asdict(self))}

    @classmethod
    def from_wire(cls, data: Any) -> SearchRequest:
        """The request `to_wire` described. WireError for another version, an unknown field
        (a newer caller's) or a value of the wrong shape."""
        if not isinstance(data, dict) or data.get("version") != WIRE_VERSION:
            found = data.get("version") if isinstance(data, dict) else None
            raise WireError(f"search request version {found!r}, expected {WIRE_VERSION}")
        fields = data.get("request")
        if not isinstance(fields, dict):
            raise WireError("search request without its fields")
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(fields) - known)
        if unknown:
            raise WireError(f"unknown search request field(s): {', '.join(unknown)}")
        values = dict(fields)
        try:
            if values.get("where") is not None:
                values["where"] = _where_from(values["where"])
            if values.get("sql") is not None:
                values["sql"] = SqlJoin(**values["sql"])
            return cls(**values)
        except (TypeError, KeyError, AttributeError) as error:
            raise WireError(f"malformed search request: {error}") from None


def _plain(value: Any) -> Any:
    """Tuples as lists, recursively (what JSON keeps of them)."""
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(item) for item in value]
    return value


def _where_from(data: dict[str, Any]) -> Where:
    def conditions(items: list[dict[str, Any]]) -> tuple[Condition, ...]:
        return tuple(
            Condition(
                item["field"],
                item["op"],
                tuple(item["value"]) if isinstance(item["value"], list) else item["value"],
            )
            for item in items
        )

    return Where(conditions(data["all_of"]), conditions(data["any_of"]))

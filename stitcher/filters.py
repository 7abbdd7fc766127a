"""A store-independent filter: conditions on chunk properties, ANDed (plus one OR group).

Stores translate it (Weaviate `Filter` objects, or Python predicates in the memory store), so
values are never pasted into a query string.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

Op = Literal["eq", "ne", "gt", "ge", "lt", "le", "contains", "any"]


@dataclass(frozen=True)
class Condition:
    """`field op value`; for "any" the value is a tuple and one element must match."""

    field: str
    op: Op
    value: Any


@dataclass(frozen=True)
class Where:
    """All of `all_of` must hold, and at least one of `any_of` when it is not empty."""

    all_of: tuple[Condition, ...] = ()
    any_of: tuple[Condition, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.all_of or self.any_of)

    def and_(self, *conditions: Condition) -> Where:
        """A copy with more conditions ANDed in."""
        return Where(self.all_of + tuple(conditions), self.any_of)

"""Filter values against the values stored: tags matched whatever their case, and a value that no
chunk holds named in a notice together with the stored values nearest to it.

Why the notice: a filter that matches nothing looks exactly like a search that found nothing;
`tags=Citty` should say that no chunk has the tag and that `city` is stored. It costs one
aggregate query per field, so it is asked only when it decides something: always for `tags`
(whose case-folding needs the stored spellings anyway), and for other text fields only when the
search came back empty.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Sequence

from stitcher.filters import Condition, Where

#: The list field whose values match whatever their case (a tag typed `City` finds `city`).
FOLDED_FIELDS = frozenset({"tags"})

#: Fields whose conditions are checked against stored values: text stored whole (field
#: tokenization), where "no chunk has it" is a plain fact. `title` (matched word by word) and
#: the numbers and dates (ranges) are left out.
CHECKED_KINDS = frozenset({"text", "text[]"})

#: Stored values named in a notice at most.
NEAREST = 3

#: Stored values of one field, most common first.
Lookup = Callable[[str], Sequence[str]]


def fold_cases(where: Where, lookup: Lookup) -> tuple[Where, list[str]]:
    """`where` with each tag value replaced by the stored tags equal to it but for case, and a
    notice for each tag value that no chunk has (the filter then stays as given: it matches
    nothing, as it says).

    `!=` on a folded value excludes every spelling when it is among the conditions that must
    all hold; inside the any-of group it excludes the spelling given (one condition cannot
    exclude several values there).
    """
    notices: list[str] = []
    all_of = tuple(
        folded
        for condition in where.all_of
        for folded in _folded(condition, lookup, notices, every_spelling=True)
    )
    any_of = tuple(
        folded
        for condition in where.any_of
        for folded in _folded(condition, lookup, notices, every_spelling=False)
    )
    return Where(all_of, any_of), notices


def missing_values(where: Where, kinds: dict[str, str], lookup: Lookup) -> list[str]:
    """A notice for each `=`, `!=` or `a,b` value on a whole-text field that no chunk holds
    (fields in FOLDED_FIELDS are fold_cases's business)."""
    notices: list[str] = []
    for condition in (*where.all_of, *where.any_of):
        if condition.field in FOLDED_FIELDS or kinds.get(condition.field) not in CHECKED_KINDS:
            continue
        if condition.op not in ("eq", "ne", "any"):
            continue
        stored = lookup(condition.field)
        held = set(stored)
        for value in _values(condition):
            if value not in held:
                notices.append(_missing(condition.field, value, stored))
    return notices


def _folded(
    condition: Condition, lookup: Lookup, notices: list[str], *, every_spelling: bool
) -> Iterable[Condition]:
    if condition.field not in FOLDED_FIELDS or condition.op not in ("eq", "ne", "any"):
        yield condition
        return
    stored = lookup(condition.field)
    spellings: dict[str, list[str]] = {}
    for value in stored:
        spellings.setdefault(value.casefold(), []).append(value)
    matched: list[str] = []
    for value in _values(condition):
        found = spellings.get(value.casefold())
        if found is None:
            notices.append(_missing(condition.field, value, stored))
            matched.append(value)
        else:
            matched.extend(v for v in found if v not in matched)
    if condition.op == "ne":
        excluded = matched if every_spelling else matched[:1]
        yield from (Condition(condition.field, "ne", value) for value in excluded)
    elif len(matched) == 1:
        yield Condition(condition.field, "eq", matched[0])
    else:
        yield Condition(condition.field, "any", tuple(matched))


def _values(condition: Condition) -> list[str]:
    value = condition.value
    items = value if isinstance(value, (tuple, list)) else (value,)
    return [str(item) for item in items]


def _missing(field: str, value: str, stored: Sequence[str]) -> str:
    if not stored:
        return f"{field}={value}: no chunk has it; no chunk has any {field} at all"
    by_fold = {item.casefold(): item for item in reversed(stored)}  # the commonest spelling
    close = difflib.get_close_matches(value.casefold(), list(by_fold), n=NEAREST, cutoff=0.5)
    nearest = [by_fold[item] for item in close] or list(stored[:NEAREST])
    listed = ", ".join(nearest)
    return f"{field}={value}: no chunk has it; stored values of {field} include {listed}"

"""`--where` expressions → a `Where`. Values stay strings here; the store converts them by the
field's stored type (so `date>=2021-01-01` compares dates, `rating>3` numbers) and never pastes
them into a query string.

Grammar, one condition per expression::

    field=value      equal (for a list field such as tags: the list contains value);
                     field==value means the same (as in Python or SQL's habits)
    field=a,b        any of a, b (quote the value to keep a comma: title="Paris, France")
    field!=value     not equal
    field>=v  field>v  field<=v  field<v
    field~text       contains text (substring, case-insensitive for words)

Fields are those `stitcher fields` lists: `source` is the name of the folder a document was
ingested from (or `--source`), `path` its file path; `tags` match whatever their case. What a
value that matches nothing does is stitcher.filtervalues's business.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from stitcher.errors import FilterError
from stitcher.filters import Condition, Op, Where

_EXPRESSION = re.compile(
    r"^\s*([A-Za-z_\u0080-\uffff][\w.\-\u0080-\uffff]*)\s*(==|!=|>=|<=|=|>|<|~)(.*)$", re.S
)
_OPS: dict[str, Op] = {
    "==": "eq",
    "=": "eq",
    "!=": "ne",
    ">=": "ge",
    "<=": "le",
    ">": "gt",
    "<": "lt",
    "~": "contains",
}


def parse_condition(expression: str) -> Condition:
    """One `field<op>value` expression as a Condition; FilterError when it is malformed."""
    match = _EXPRESSION.match(expression)
    if match is None:
        raise FilterError(
            f"cannot read filter {expression!r}: write field=value, field!=value, field>=value, "
            "field<value or field~text (e.g. tags=policy, date>=2021-01-01)"
        )
    field, symbol, raw = match.group(1), match.group(2), match.group(3).strip()
    if not raw:
        raise FilterError(f"filter {expression!r} has no value after {symbol!r}")
    op = _OPS[symbol]
    quoted = len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'"
    if quoted:
        return Condition(field, op, raw[1:-1])
    if op == "eq" and "," in raw:
        values = tuple(v.strip() for v in raw.split(",") if v.strip())
        return Condition(field, "any", values)
    return Condition(field, op, raw)


def parse_where(all_of: Sequence[str] = (), any_of: Sequence[str] = ()) -> Where:
    """`--where` expressions (all must hold) and `--where-any` expressions (one must hold)."""
    return Where(
        tuple(parse_condition(e) for e in all_of),
        tuple(parse_condition(e) for e in any_of),
    )

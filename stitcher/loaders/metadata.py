"""Metadata values: key names, typed values, dates, tags, language, sidecar files."""

from __future__ import annotations

import datetime as dt
import json
import math
import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from stitcher.errors import LoadError

#: Suffix of the JSON file whose keys override a document's own metadata.
SIDECAR_SUFFIX = ".meta.json"

_KEY_JUNK = re.compile(r"[^a-z0-9_]+")
_ISO_DATE = re.compile(
    r"^\d{4}-\d{2}-\d{2}"
    r"(?:[T ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?\s*(?:Z|[+-]\d{2}(?::?\d{2})?)?)?$",
    re.IGNORECASE,
)
_TAG_SPLIT = re.compile(r"[,;，；、]")

_HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_KANA_HANGUL = re.compile("[\u3040-\u30ff\uac00-\ud7a3]")
_LATIN = re.compile("[A-Za-z\u00c0-\u024f]")
_LETTER = re.compile(r"[^\W\d_]")
_WORD = re.compile(r"[A-Za-z]+")
_ENGLISH_WORD = re.compile(
    r"\b(?:the|and|of|to|in|is|that|for|it|with|as|on|are|this|be|by|or|an|from)\b",
    re.IGNORECASE,
)
_LANG_SAMPLE = 50_000


def sanitise_key(key: object) -> str | None:
    """Lowercase `key` and make it a valid property name: "Published-At" → "published_at".

    Returns None when nothing usable is left.
    """
    name = _KEY_JUNK.sub("_", str(key).strip().lower()).strip("_")
    if not name:
        return None
    return "_" + name if name[0].isdigit() else name


def parse_date(value: object) -> dt.datetime | None:
    """A timezone-aware datetime from a datetime, date or ISO 8601 string; naive means UTC.

    Returns None when `value` is not a date.
    """
    if isinstance(value, dt.datetime):
        return value if value.tzinfo else value.replace(tzinfo=dt.timezone.utc)
    if isinstance(value, dt.date):
        return dt.datetime(value.year, value.month, value.day, tzinfo=dt.timezone.utc)
    if not isinstance(value, str):
        return None
    text = value.strip()
    if not _ISO_DATE.match(text):
        return None
    # fromisoformat before 3.11 rejects "Z", "+0800" and a space before the offset.
    text = re.sub(r"\s*(?:[zZ])$", "+00:00", text)
    text = re.sub(r"\s*([+-]\d{2}):?(\d{2})$", r"\1:\2", text)
    text = re.sub(r"\s*([+-]\d{2})$", r"\1:00", text).replace(",", ".")
    try:
        parsed = dt.datetime.fromisoformat(text)
    except ValueError:
        return None
    return parse_date(parsed)


def json_like(value: Any) -> Any:
    """Convert a front-matter or sidecar value to str, int, float, bool, datetime or list[str].

    Date-looking strings become datetimes; lists become lists of strings (None items dropped);
    mappings become JSON text. Returns None for values to drop (None, NaN, empty lists).
    """
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, (int, str)):
        date = parse_date(value) if isinstance(value, str) else None
        return date or value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, (dt.date, dt.datetime)):
        return parse_date(value)
    if isinstance(value, (list, tuple, set)):
        items = [_list_item(item) for item in value if item is not None]
        return items or None
    if isinstance(value, Mapping):
        return json.dumps(value, ensure_ascii=False, sort_keys=True, default=str)
    return str(value)


def _list_item(item: object) -> str:
    if isinstance(item, (dt.date, dt.datetime)):
        return item.isoformat()
    if isinstance(item, (Mapping, list)):
        return json.dumps(item, ensure_ascii=False, sort_keys=True, default=str)
    return str(item)


def clean_mapping(raw: Mapping[Any, Any]) -> dict[str, Any]:
    """Sanitise keys and convert values of a front-matter or sidecar mapping."""
    cleaned: dict[str, Any] = {}
    for key, value in raw.items():
        name = sanitise_key(key)
        # Tags are split here, before json_like could turn a "2024-01-01" tag into a datetime.
        converted = split_tags(value) if name == "tags" else json_like(value)
        if name is not None and converted is not None:
            cleaned[name] = converted
    return cleaned


def split_tags(value: object) -> list[str]:
    """Tags from a list or a comma-separated string (ASCII or Chinese commas)."""
    if value is None:
        return []
    items: Iterable[object] = value if isinstance(value, (list, tuple)) else [value]
    tags: list[str] = []
    for item in items:
        tags.extend(part.strip() for part in _TAG_SPLIT.split(str(item)))
    return [tag for tag in tags if tag]


def unique(items: Iterable[str]) -> list[str]:
    """Items in first-seen order, each once."""
    return list(dict.fromkeys(items))


def read_sidecar(path: Path, source: str) -> dict[str, Any]:
    """Keys of "<file>.meta.json" next to `path`, cleaned; {} when there is none.

    Raises:
        LoadError: The sidecar exists but is unreadable, not JSON, or not a JSON object.
    """
    sidecar = path.with_name(path.name + SIDECAR_SUFFIX)
    try:
        raw = sidecar.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise LoadError(f"{source}: cannot read its sidecar {sidecar} ({exc.strerror})") from None
    try:
        data = json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise LoadError(f"{source}: sidecar {sidecar} is not valid UTF-8 JSON ({exc})") from None
    if not isinstance(data, dict):
        raise LoadError(f"{source}: sidecar {sidecar} must hold a JSON object {{...}}")
    return clean_mapping(data)


def detect_lang(text: str) -> str:
    """ "zh", "en" or "other" from the characters of (a sample of) `text`.

    Chinese when Han characters are at least a quarter as many as Latin letters and there is
    little kana/hangul (Japanese, Korean); English when Latin letters are most of the letters and
    common English words are frequent enough (short texts: Latin letters suffice).
    """
    sample = _sample(text)
    han = _count(_HAN, sample)
    latin = _count(_LATIN, sample)
    if han and han * 4 >= latin and _count(_KANA_HANGUL, sample) * 10 < han:
        return "zh"
    letters = _count(_LETTER, sample)
    if latin and latin * 2 > letters:
        words = _count_matches(_WORD, sample)
        if words < 20 or _count_matches(_ENGLISH_WORD, sample) * 100 >= 8 * words:
            return "en"
    return "other"


def _sample(text: str) -> str:
    # Three slices so a long document is judged by more than its opening.
    if len(text) <= 3 * _LANG_SAMPLE:
        return text
    middle = len(text) // 2
    return "\n".join(
        (text[:_LANG_SAMPLE], text[middle : middle + _LANG_SAMPLE], text[-_LANG_SAMPLE:])
    )


def _count(pattern: re.Pattern[str], text: str) -> int:
    return len(text) - len(pattern.sub("", text))


def _count_matches(pattern: re.Pattern[str], text: str) -> int:
    return sum(1 for _ in pattern.finditer(text))

"""E-mail: one message (.eml) or a mailbox of messages (.mbox), parsed by the stdlib `email`.

(Named mail, not email: a module named email would shadow the standard library's package.)

The stored text (what chunk offsets refer to) of a message is its header block, a blank line
and its body. The header block is one line each for From, To, Cc, Date and Subject (those
present), decoded (RFC 2047 words, 8-bit headers) and on one line however they were folded.
The body is the message's text/plain part (multipart/alternative: the plain one), else its
text/html part through the HTML reader; transfer encodings (quoted-printable, base64) are undone
and the declared charset decoded (GB2312 and GBK as GB18030, their superset; a wrong or missing
charset falls back to detection, `stitcher.loaders.decoding.decode_text`). format=flowed text
is unflowed (RFC 3676). Plain text is then rewrapped (`stitcher.loaders.rewrap`: quoted "> "
lines are joined within their quote depth and keep their prefix) up to a patch, if the message
carries one (from its first "diff --git", "diff -u", "Index:" or "---"/"+++" line on, kept line
for line); the signature, from the last "-- " line on, is kept verbatim as a paragraph of its
own. Attachments are not read.

An mbox file is one document (discovery gives one document per file): its messages in file
order, each as above, separated by a blank line, so every message starts with its own header
block. A message starts at a "From " line (with a time, "From alice@example.org Mon May  6
10:12:00 2024") at the start of the file or after a blank line; ">From " lines in bodies lose
one ">" (mboxrd).

Metadata of a message (.eml): Subject → title; Date → date; From → from; To → to; Cc → cc;
Message-ID (without <>) → message_id. Of an mbox: the subject shared by every message (Re:,
Fwd: and the like set aside) → title, else none (the file name); the first message's Date →
date; the number of messages → messages.
"""

from __future__ import annotations

import datetime as dt
import re
from email import policy
from email.errors import HeaderParseError
from email.header import decode_header
from email.message import EmailMessage, MIMEPart
from email.parser import BytesParser
from email.utils import parsedate_to_datetime
from typing import Any

from stitcher.errors import LoadError
from stitcher.loaders.decoding import decode_text, normalise_newlines
from stitcher.loaders.formats import Extracted, read_html
from stitcher.loaders.metadata import parse_date
from stitcher.loaders.rewrap import rewrap

_HEADER_LINES = ("From", "To", "Cc", "Date", "Subject")
# Headers one of which any real message has; a text file renamed .eml has none.
_MESSAGE_HEADERS = ("from", "to", "subject", "date", "message-id", "received", "sender")
_CHARSETS = {
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "x-gbk": "gb18030",
    "cp936": "gb18030",
    "euc-cn": "gb18030",
    "big5": "big5hkscs",
    "ks_c_5601-1987": "cp949",
    "x-sjis": "shift_jis",
}
# "From " line of an mbox: the sender, then an asctime date with a time of day.
_FROM_LINE = re.compile(rb"^From \S*[^\n]*\d{1,2}:\d{2}[^\n]*$", re.MULTILINE)
_ESCAPED_FROM = re.compile(rb"^>(>*From )", re.MULTILINE)
_REPLY_PREFIX = re.compile(
    r"^(?:\s*(?:re|fwd?|aw|wg|sv|vs|tr|回复|答复|转发|回覆|轉寄)\s*(?:\[\d+\])?\s*[:：])+\s*",
    re.IGNORECASE,
)
_SIGNATURE = re.compile(r"^-- ?$", re.MULTILINE)


def read_eml(data: bytes, source: str) -> Extracted:
    """An .eml file: one message (see the module docstring).

    Raises:
        LoadError: The file has no e-mail headers.
    """
    message = _parse(data)
    if not any(name.lower() in _MESSAGE_HEADERS for name in message):
        raise LoadError(f"{source}: not an e-mail message (no From, To, Subject or Date header)")
    text, meta = _message(message, source)
    return Extracted(text, meta)


def read_mbox(data: bytes, source: str) -> Extracted:
    """An .mbox file: every message, in file order, as one document (see the module docstring).

    Raises:
        LoadError: The file does not start with a "From " line.
    """
    starts = _message_starts(data)
    if not starts or data[: starts[0]].strip():
        raise LoadError(
            f'{source}: not an mbox file (it does not start with a "From " line); '
            "a single message belongs in a .eml file"
        )
    texts: list[str] = []
    subjects: list[str] = []
    first_date: dt.datetime | None = None
    for number, (begin, end) in enumerate(zip(starts, [*starts[1:], len(data)], strict=True), 1):
        raw = data[begin:end]
        raw = raw[raw.find(b"\n") + 1 :] if b"\n" in raw else b""
        message = _parse(_ESCAPED_FROM.sub(rb"\1", raw))
        text, meta = _message(message, f"{source} (message {number})")
        texts.append(text)
        subjects.append(_REPLY_PREFIX.sub("", meta.get("title", "")).strip())
        if first_date is None:
            first_date = meta.get("date")
    meta_out: dict[str, Any] = {"messages": len(texts)}
    if subjects[0] and all(subject == subjects[0] for subject in subjects):
        meta_out["title"] = subjects[0]
    if first_date is not None:
        meta_out["date"] = first_date
    return Extracted("\n\n".join(text for text in texts if text), meta_out)


_HEADER_LINE = re.compile(rb"([A-Za-z][A-Za-z0-9-]*):[ \t]")


def looks_like_mbox(head: bytes) -> bool:
    """Whether a file's first bytes are those of an mbox: a "From " line with a time, then mail
    headers, one of them a header every message has (From, To, Subject, Date ...)."""
    first_line, _, rest = head.partition(b"\n")
    if not _FROM_LINE.fullmatch(first_line.rstrip(b"\r")):
        return False
    names = []
    for line in rest.split(b"\n"):
        line = line.rstrip(b"\r")
        if not line:
            break
        if line[:1] in (b" ", b"\t"):  # a folded header's continuation
            continue
        header = _HEADER_LINE.match(line)
        if header is None:
            return False
        names.append(header.group(1).decode("ascii").lower())
    return any(name in _MESSAGE_HEADERS for name in names)


def _message_starts(data: bytes) -> list[int]:
    starts = []
    for match in _FROM_LINE.finditer(data):
        at = match.start()
        before = data[max(0, at - 3) : at].replace(b"\r", b"")
        if at == 0 or before.endswith(b"\n\n") or not data[:at].strip():
            starts.append(at)
    return starts


def _parse(data: bytes) -> EmailMessage:
    message = BytesParser(policy=policy.default).parsebytes(data)
    assert isinstance(message, EmailMessage)  # policy.default makes EmailMessage objects
    return message


def _message(message: EmailMessage, source: str) -> tuple[str, dict[str, Any]]:
    """The text of one message (header block, blank line, body) and its metadata."""
    headers: dict[str, str] = {}
    for name, value in message.raw_items():
        headers.setdefault(name.lower(), _header_text(value))  # the first of a repeated header
    lines = [
        f"{name}: {headers[name.lower()]}" for name in _HEADER_LINES if headers.get(name.lower())
    ]
    body = _body(message, source)
    text = "\n".join(lines)
    if body:
        text = f"{text}\n\n{body}" if text else body
    meta: dict[str, Any] = {}
    if headers.get("subject"):
        meta["title"] = headers["subject"]
    date = _date(headers.get("date"))
    if date is not None:
        meta["date"] = date
    for key in ("from", "to", "cc"):
        if headers.get(key):
            meta[key] = headers[key]
    if headers.get("message-id"):
        meta["message_id"] = headers["message-id"].strip().strip("<>").strip()
    return text, meta


def _header_text(raw: object) -> str:
    """A header's raw value decoded: RFC 2047 words in their charset, 8-bit bytes detected,
    folding undone."""
    value = str(raw)
    if any("\udc80" <= char <= "\udcff" for char in value):
        # 8-bit bytes in a header (RFC 6532 UTF-8, or a legacy charset) came as surrogates.
        value = _decode(value.encode("ascii", "surrogateescape"), None)
    try:
        parts = decode_header(value)
    except (HeaderParseError, ValueError, LookupError):
        parts = [(value, None)]
    text = "".join(
        _decode(part, charset) if isinstance(part, bytes) else part for part, charset in parts
    )
    return " ".join(text.split())


def _decode(data: bytes, charset: str | None) -> str:
    """Bytes in their declared charset; when it is missing, unknown or wrong, detected."""
    if charset:
        name = charset.strip().strip('"').lower()
        try:
            return normalise_newlines(data.decode(_CHARSETS.get(name, name)))
        except (LookupError, UnicodeDecodeError):
            pass
    try:
        return decode_text(data, "") if data else ""
    except LoadError:
        return normalise_newlines(data.decode("utf-8", "replace"))


def _date(value: str | None) -> dt.datetime | None:
    if not value:
        return None
    try:
        return parse_date(parsedate_to_datetime(value))
    except (TypeError, ValueError, IndexError, OverflowError):
        return None


def _body(message: EmailMessage, source: str) -> str:
    part = message.get_body(preferencelist=("plain", "html"))
    if part is None:
        return ""
    try:
        payload = part.get_payload(decode=True)
    except Exception:  # a broken transfer encoding: one bad message, read what is there
        payload = None
    if not isinstance(payload, bytes) or not payload.strip():
        return ""
    text = _decode(payload, part.get_content_charset())
    if part.get_content_type() == "text/html":
        return read_html(text.encode("utf-8"), source).text
    if _param(part, "format") == "flowed":
        text = unflow(text, delsp=_param(part, "delsp") == "yes")
    return _plain(text)


def _param(part: MIMEPart, name: str) -> str:
    value = part.get_param(name, "")
    return value.lower() if isinstance(value, str) else ""


# Where a patch starts in a message (git format-patch, diff -u pasted into a mail): from there
# on every line is the diff's own, never joined (a "+" line alone is an added blank line).
_PATCH = re.compile(r"^(?:diff --git |diff -[a-zA-Z]|Index: \S|--- \S.*\n\+\+\+ \S)", re.MULTILINE)


def _plain(text: str) -> str:
    """Plain text: rewrapped up to a patch, if any; the patch and the signature as they are."""
    signature = ""
    marks = list(_SIGNATURE.finditer(text))
    if marks:
        cut = marks[-1].start()
        text, signature = text[:cut], text[cut:]
        signature = "\n".join(line.rstrip() for line in signature.split("\n")).strip("\n")
    patch = _PATCH.search(text)
    if patch:
        diff = "\n".join(line.rstrip() for line in text[patch.start() :].split("\n")).strip("\n")
        prose = rewrap(text[: patch.start()]).strip("\n").rstrip()
        body = f"{prose}\n\n{diff}" if prose else diff
    else:
        body = rewrap(text).strip("\n").rstrip()
    if signature.strip("- \n"):
        return f"{body}\n\n{signature}" if body else signature
    return body


_QUOTE_PREFIX = re.compile(r"^>+")


def unflow(text: str, *, delsp: bool = False) -> str:
    """format=flowed text (RFC 3676) with its soft line breaks removed.

    A line ending in a space continues on the next line of the same quote depth; space-stuffing
    (one space before a line that starts with a space, ">" or "From ") is removed; the signature
    separator "-- " is never a soft break. Quoted lines come back as ">" per level and a space.
    """
    out: list[tuple[int, str]] = []
    joining = False
    for line in text.split("\n"):
        prefix = _QUOTE_PREFIX.match(line)
        depth = len(prefix.group()) if prefix else 0
        content = line[depth:]
        if content.startswith(" "):
            content = content[1:]
        if joining and out and out[-1][0] == depth:
            out[-1] = (depth, out[-1][1] + content)
        else:
            out.append((depth, content))
        soft = content.endswith(" ") and content != "-- "
        if soft and delsp:
            out[-1] = (depth, out[-1][1][:-1])
        joining = soft
    return "\n".join((">" * depth + " " + content) if depth else content for depth, content in out)

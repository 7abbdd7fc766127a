"""Join hard-wrapped lines back into paragraphs, leaving structured lines alone.

The rule, applied to each paragraph (a run of non-blank lines between blank lines), outside
fenced code blocks (``` or ~~~):

A line break between line A and the next line B is removed when all of these hold:

1. A is "full": its display width (CJK characters count 2) is at least 60% of the widest line
   in the paragraph, and the paragraph's widest line is at least 20 columns — this is what hard
   wrapping looks like, and it keeps a short heading line apart from the text under it;
2. A ends without a sentence terminator (. ! ? … 。 ！ ？, possibly followed by closing quotes or
   brackets) — a break after a finished sentence may be deliberate — unless the paragraph as a
   whole is plainly hard-wrapped: at least half of its line breaks pass rules 1 and 3 with A
   unterminated;
3. neither A nor B is structure: a list item (-, *, +, •, "1.", "1)", "一、", "（一）"), an indented
   line (spaces, tab or ideographic space: code, quotes, Chinese paragraph indents), a heading
   ("#"), a blockquote (">"), a table row ("|" in the line, or a tab or a run of 3+ spaces inside
   it), a horizontal rule or an HTML tag line.

The joint: nothing when either side of it is a CJK character or CJK punctuation (Chinese puts
no space between lines, nor between Chinese and Latin words); nothing after a hyphen that
follows a letter ("well-" + "known"); otherwise a single space. Trailing spaces of A are dropped.
Nothing else in the text changes.
"""

from __future__ import annotations

import re

FENCE = re.compile(r"^ {0,3}(```|~~~)")
_TERMINATED = re.compile(r"[.!?…。！？][\"'”’」』)）\]】》]*$")
_STRUCTURE = re.compile(
    r"""^(?:
        [ \t\u3000]                          # indented: code, quote, paragraph indent
      | [-*+•·]\s                            # bullet
      | \d{1,3}(?:[.)]\s|、)                  # numbered item
      | [一二三四五六七八九十百]+、            # Chinese numbered item
      | [(（][一二三四五六七八九十\d]+[)）]     # (一) (1)
      | \#{1,6}(?:\s|$)                      # heading
      | >                                    # blockquote
      | <[A-Za-z!/]                          # HTML block
      | (?:[-*_=]\s*){3,}$                   # rule / setext underline
    )""",
    re.VERBOSE,
)
_CJK = re.compile(
    "[\u2e80-\u2fdf\u3000-\u303f\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uff00-\uffef]"
)
_WIDE_RUN = re.compile(
    "[\u1100-\u115f\u2e80-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6]+"
)

_MIN_FULL_SHARE = 0.6
_MIN_WRAP_WIDTH = 20


def rewrap(text: str) -> str:
    """Join lines that were broken inside a paragraph (see the module docstring for the rule).

    Args:
        text: Text with "\\n" line ends.

    Returns:
        The text with hard-wrap line breaks removed; everything else unchanged.
    """
    if "\n" not in text:
        return text
    out: list[str] = []
    paragraph: list[str] = []
    in_fence = False
    for line in text.split("\n"):
        if FENCE.match(line):
            out.extend(_join_paragraph(paragraph))
            paragraph = []
            in_fence = not in_fence
            out.append(line)
        elif in_fence:
            out.append(line)
        elif line.strip():
            paragraph.append(line)
        else:
            out.extend(_join_paragraph(paragraph))
            paragraph = []
            out.append(line)
    out.extend(_join_paragraph(paragraph))
    return "\n".join(out)


def _join_paragraph(lines: list[str]) -> list[str]:
    if len(lines) < 2:
        return lines
    widths = [display_width(line) for line in lines]
    widest = max(widths)
    if widest < _MIN_WRAP_WIDTH:
        return lines
    structural = [_is_structure(line) for line in lines]
    # Break i sits between lines[i] and lines[i + 1].
    candidates = [
        i
        for i in range(len(lines) - 1)
        if not structural[i] and not structural[i + 1] and widths[i] >= _MIN_FULL_SHARE * widest
    ]
    terminated = {i for i in candidates if _is_terminated(lines[i])}
    wrapped_paragraph = (len(candidates) - len(terminated)) * 2 >= len(lines) - 1
    joins = {i for i in candidates if i not in terminated or wrapped_paragraph}
    out = [lines[0]]
    for i in range(1, len(lines)):
        if i - 1 in joins:
            head = out[-1].rstrip()
            out[-1] = head + _joint(head, lines[i]) + lines[i]
        else:
            out.append(lines[i])
    return out


def _is_terminated(line: str) -> bool:
    # Only the tail matters; searching the whole line for "$" would cost its length each time.
    return _TERMINATED.search(line.rstrip()[-8:]) is not None


def _is_structure(line: str) -> bool:
    if "|" in line or _STRUCTURE.match(line):
        return True
    inner = line.strip()
    return "\t" in inner or "   " in inner


def _joint(head: str, tail: str) -> str:
    if not head or not tail:
        return ""
    if _CJK.match(head[-1]) or _CJK.match(tail[0]):
        return ""
    if head[-1] == "-" and len(head) > 1 and head[-2].isalpha():
        return ""
    return " "


def display_width(line: str) -> int:
    """Columns the line takes in a monospace font: East Asian wide characters count 2."""
    return 2 * len(line) - len(_WIDE_RUN.sub("", line))

"""Where each line of a file begins in its loaded text, so a hit names the line a reader finds.

Rewrap joins a paragraph's lines into one, `_trim` drops leading blank lines, Markdown loses its
front matter and info manuals their node headers: the loaded text's own line count is then not
the file's. `line_starts` aligns the two texts instead of making every transformation keep a
map: loading only ever removes characters (line breaks, indents, hyphens at a join, whole
lines), never adds or reorders text, so each line of the file is found, in order, a little
ahead of where the previous one was found.
"""

from __future__ import annotations

#: Characters of a line's content looked for in the loaded text: enough to tell most lines
#: apart, short enough that what a join changes at a line's end (a hyphen) is left out.
_KEY_CHARS = 24
#: Slack beyond the file's own distance: loading can shift text by the width of what it
#: replaced with a space at a join, never by more than a few characters per line.
_SLACK = 64


def line_starts(original: str, loaded: str) -> list[int]:
    """For line i+1 of `original`, the offset in `loaded` where its text begins.

    Non-decreasing. A line that is not in `loaded` (blank, or dropped by its reader) gets the
    start of the next line that is, so `stitcher.ids.line_of` answers with the line holding
    the text.
    """
    starts: list[int | None] = []
    pos = 0  # in `loaded`: where the next line's text can begin
    last_found_at = 0  # in `original`: where the last line found began
    offset = 0  # in `original`: where the current line begins
    for line in original.split("\n"):
        content = line.strip()
        # A join may drop a hyphen at the line's end; a line of only dashes keeps them.
        key = content[:_KEY_CHARS].rstrip("-\u00ad") or content[:_KEY_CHARS]
        found = -1
        if key:
            reach = pos + (offset - last_found_at) + len(content) + _SLACK
            found = loaded.find(key, pos, reach)
        if found >= 0:
            starts.append(found)
            pos, last_found_at = found + len(key), offset
        else:
            starts.append(None)
        offset += len(line) + 1
    filled: list[int] = []
    following = len(loaded)
    for start in reversed(starts):
        following = following if start is None else min(start, following)
        filled.append(following)
    filled.reverse()
    return filled

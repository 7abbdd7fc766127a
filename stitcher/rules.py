"""The version of the text rules every stored chunk was made with.

Offsets, `starts_sentence`/`ends_sentence` and the stored context of a chunk all depend on how a
file was turned into text (decoding, hard-wrap joining: stitcher.loaders.rewrap), where
sentences end (stitcher.sentences) and where the text is cut into chunks (stitcher.chunking).
When any of them changes, chunks stored earlier describe a text this code would no longer
produce. The version is part of every document version
(`Document.doc_hash`) and stored on every chunk (`rules`), so the next `stitcher ingest` rebuilds
each document stored under other rules instead of skipping it as unchanged — reusing the vectors
of chunks whose text did not change.

Bump the matching number whenever a change would give any existing file other text, other chunk
boundaries or other sentence flags. Never lower it.
"""

from __future__ import annotations

from stitcher.segment import KEYWORD_RULES_VERSION
from stitcher.sentences import SENTENCE_RULES_VERSION

#: Version of the loaders' text rules (decoding, newline and hard-wrap handling, extraction).
#: 2: per-paragraph rewrap of indented, man, info, licence, quoted, PDF and Chinese text.
#: 3: PDF text from PDFium (spaces between words), option lists in man pages joined, justified
#:    lines with many widened gaps no longer taken for table rows.
#: 4: PDF: a sentence cut by a page break reads on (one line break between the pages) and the
#:    footnotes at the foot of that page move after it.
#: 5: a few bytes that are not UTF-8 in otherwise ASCII or UTF-8 text become U+FFFD instead of
#:    making the whole file a legacy code page ("\xc3(" was cp1250 "Ă(").
#: 6: tabs count as columns to 8-column tab stops (indents, gaps, widths) in the rewrap rules,
#:    so tab-indented renderings (`man X | col -b`) rewrap as space-indented ones do; PDF: a
#:    full line broken between two Chinese characters is joined (rewrap.join_cjk_lines).
#: 7: two lines that are both fields of a header block ("Format: https://.../", "Comment:" in
#:    Debian copyright files) are not joined.
#: 8: man page sources rewrap at the column they were rendered at (78), broken only at spaces
#:    (troff cannot break between Han characters: a short line before a long Han run and a
#:    line past the column are wraps). In every form, a line that stops short because an
#:    inline code span ("=M-x org-drill-resume=", "``IMPORTED``") did not fit after it is a
#:    wrapped line.
#: 9: in a page rendered at a known column, a tag that overflowed a full line and stops
#:    mid-sentence reads on into its deeper body when that starts in lower case (gcloud's
#:    whole-paragraph .TP tags); a run that the renderer filled and justified (2+ full
#:    lines with widened gaps) is prose whatever its words are (stty's option lists), unless
#:    it holds a bracketed synopsis argument; a psql prompt ("testdb=>") marks a transcript,
#:    kept line by line.
LOADER_RULES = 9

#: Version of the sentence rules (terminators, closing quotes, abbreviations, soft line breaks);
#: kept next to the rules themselves.
SENTENCE_RULES = SENTENCE_RULES_VERSION

#: Version of the keyword analysis that makes each chunk's stored BM25 text (`text_seg`:
#: Chinese segmentation, compound parts, English stems); kept next to the rules themselves.
#: Version 1 was never written into the string, so stored values without a keywords part are 1.
KEYWORD_RULES = KEYWORD_RULES_VERSION

#: Version of the chunking rules (stitcher.chunking), apart from the loaders' so that a change
#: of chunk boundaries alone leaves the text a loader gives as it was.
#: 2: a piece without a letter or digit (blank lines, lone markup) joins a neighbouring chunk.
#: 3: so does a piece that is only a list item's number ("1. ", "(a) ").
CHUNK_RULES = 3

#: What stored chunks are compared against; one string so a stored value is self-describing.
TEXT_RULES_VERSION = (
    f"loader{LOADER_RULES}.sentences{SENTENCE_RULES}.chunks{CHUNK_RULES}.keywords{KEYWORD_RULES}"
)

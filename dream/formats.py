"""The formats a person asks their work in, as a closed vocabulary grouped by family.

A format is one of a few dozen names (PDF, Word, CSV, SVG, PowerPoint, APA…), so a standing
request can be read from the value whatever the wording around it ("whenever u give me
tables give them as CSV", "as of March, send the summaries as Word documents", "xlsx from
now pls, not csv"). Formats of one family stand for one another: a newer document format
replaces the older, a spreadsheet format replaces a spreadsheet format, and a document
format leaves an image format alone. :mod:`.relations` decides whether a sentence makes the
choice a standing one; this module only finds the values.
"""

from __future__ import annotations

import re

#: family → (pattern, canonical spelling or None to keep the words as written)
_VOCABULARY: dict[str, list[tuple[str, str | None]]] = {
    "document": [(r"PDFs?", "PDF"), (r"(?:MS\s+|Microsoft\s+)?Word(?:\s+(?:docs?|documents?|files?))?(?:\s*\(\.?docx\))?", "Word"),
                 (r"\.?docx", "docx"),
                 (r"Google\s+Docs?", "Google Docs"), (r"plain[- ]text|\.txt|txt", "plain text"),
                 (r"Markdown|\.md", "Markdown"), (r"HTML", "HTML"), (r"LaTeX", "LaTeX"),
                 (r"RTF|rich\s+text", "RTF"), (r"ODT|OpenDocument\s+text", "ODT")],
    "spreadsheet": [(r"CSV", "CSV"), (r"\.?xlsx", "XLSX"), (r"Excel(?:\s+(?:files?|sheets?|workbooks?))?", "Excel"),
                    (r"Google\s+Sheets?", "Google Sheets"), (r"TSV", "TSV")],
    "image": [(r"PNGs?", "PNG"), (r"SVGs?", "SVG"), (r"JPE?Gs?", "JPEG"), (r"GIFs?", "GIF"),
              (r"WebP", "WebP"), (r"TIFF?", "TIFF"), (r"EPS", "EPS")],
    "subtitles": [(r"SRT", "SRT"), (r"(?:Web)?VTT", "VTT")],
    "slides": [(r"PowerPoint|pptx", "PowerPoint"), (r"Google\s+Slides", "Google Slides"), (r"Keynote", "Keynote")],
    "citation": [(r"APA(?:\s*7(?:th)?|\s+style)?", None), (r"MLA(?:\s*9(?:th)?)?", None),
                 (r"Chicago(?:\s+(?:author[- ]date|notes[- ](?:and[- ])?bibliography|style))?", None),
                 (r"Harvard(?:\s+(?:style|referencing))?", "Harvard"), (r"IEEE", "IEEE"), (r"Vancouver", "Vancouver"),
                 (r"OSCOLA", "OSCOLA")],
}

_CANON: list[tuple[str, re.Pattern[str], str | None]] = [
    (family, re.compile(rf"^(?:{rx})$", re.I), canon)
    for family, pats in _VOCABULARY.items() for rx, canon in pats]
#: Case matters for short names that are also words ("Word", "Keynote", "Chicago" as a
#: city): those must be written capitalised; acronyms may be written in lower case.
_ANY = re.compile(r"(?<![\w.-])(?:" + "|".join(
    rx if family in ("spreadsheet", "image") or rx.startswith(("PDF", "plain", r"\.", "RTF", "ODT", "HTML"))
    else rf"(?-i:{rx})"
    for family, pats in _VOCABULARY.items() for rx, _c in pats) + r")(?![\w-])", re.I)


_CITING = re.compile(r"\b(?:cit(?:e|es|ing|ation|ations)|referenc\w*|bibliograph\w*|footnotes?|endnotes?|"
                     r"sources|style|referencing)\b", re.I)

#: Two names of one file format: the program and its file's extension.
_ONE_FORMAT = (frozenset({"word", "docx"}), frozenset({"excel", "xlsx"}))


def same_format(a: str, b: str) -> bool:
    """Whether two vocabulary values name one file format ("Word" / "docx"): asking for
    minutes in Word after docx is no change of format."""
    x, y = a.strip().casefold(), b.strip().casefold()
    return x != y and any(x in g and y in g for g in _ONE_FORMAT)


def format_values(sentence: str) -> list[tuple[str, str, int, int]]:
    """(family, value, start, end) of every format named in ``sentence``."""
    out = []
    # a citation style's names are also places ("my Vancouver trip", "Chicago in May"):
    # one only where references are spoken of
    cites = _CITING.search(sentence) is not None
    for m in _ANY.finditer(sentence):
        text = " ".join(m.group(0).split())
        for family, rx, canon in _CANON:
            if rx.match(text):
                if family != "citation" or cites:
                    out.append((family, canon or text, m.start(), m.end()))
                break
    return out

"""The words a free-text query is searched for, and the FTS5 expression that searches them.

FTS5 queries are never built from raw user text: terms are extracted with the same notion
of a token as the ``unicode61`` tokenizer (letters and digits), stopwords dropped, each term
double-quoted, then joined with OR. As basic-memory does, a strict AND of the same terms can
run first with the relaxed OR filling the remainder (``candidates.STRICT_FIRST``).
"""

from __future__ import annotations

import re
import unicodedata

MAX_TERMS = 32

# A standard English stopword list (the NLTK/Lucene family), plus contraction tails that
# the tokenizer splits off ("caroline's" → "caroline", "s").
STOPWORDS = frozenset("""
a about above after again against all am an and any are aren as at be because been before
being below between both but by can cannot could couldn did didn do does doesn doing don down
during each few for from further had hadn has hasn have haven having he her here hers herself
him himself his how i if in into is isn it its itself just ll me more most mustn my myself no
nor not now of off on once only or other ought our ours ourselves out over own re same shan
she should shouldn so some such than that the their theirs them themselves then there these
they this those through to too under until up very ve was wasn we were weren what when where
which while who whom why will with won would wouldn you your yours yourself yourselves s t d
m o y ain isn ma
""".split())

_TOKEN_RE = re.compile(r"[^\W_]+")


def query_terms(query: str) -> list[str]:
    """Search terms of a free-text query: lower-cased letter/digit runs (the unicode61
    tokenizer's notion of a token), stopwords and 1-letter tokens dropped, de-duplicated,
    at most ``MAX_TERMS``. If every token is a stopword, they are kept (something beats
    nothing). Never raises."""
    if not isinstance(query, str):
        query = str(query or "")
    text = unicodedata.normalize("NFKC", query).lower()
    tokens = [t for t in _TOKEN_RE.findall(text) if len(t) > 1 or t.isdigit()]
    terms = [t for t in dict.fromkeys(tokens) if t not in STOPWORDS]
    if not terms:
        terms = list(dict.fromkeys(tokens))
    return terms[:MAX_TERMS]


def fts_query(terms: list[str], op: str = "OR") -> str:
    """An FTS5 MATCH expression of double-quoted terms joined by ``op`` ("OR" or "AND").

    Terms come from :func:`query_terms` (letters and digits only) so they cannot contain a
    quote; quoting them anyway makes FTS5 keywords (AND, OR, NOT, NEAR) and column filters
    plain strings. Returns "" for no terms.
    """
    op = " AND " if op.upper() == "AND" else " OR "
    return op.join('"' + t.replace('"', '""') + '"' for t in terms)

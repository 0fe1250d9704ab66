"""Query expansion with the wiki's aliases: "Mel" also searches "Melanie", "the atlas" also
"Atlas Mapping Project", an acronym its expansion. The names come from the knowledge
pages dream writes (title and frontmatter ``aliases:``), which the index keeps in its
``aliases`` table (``SearchIndex.alias_groups``)."""

from __future__ import annotations

import re


def _norm(text: str) -> str:
    return " ".join(re.findall(r"[^\W_]+", text.lower()))


def expansions(query: str, groups: list[list[str]], limit: int = 6) -> list[str]:
    """The names to add to ``query``: for every group one of whose names occurs in the
    query as whole words, its other names that do not (at most ``limit``, in the groups'
    order). Names of one letter or a lone stopword-size token ("a") never match."""
    q = f" {_norm(query)} "
    out: list[str] = []
    for names in groups:
        normed = [(n, _norm(n)) for n in names]
        if not any(len(m) > 2 and f" {m} " in q for _, m in normed):
            continue
        for n, m in normed:
            if m and f" {m} " not in q and n not in out:
                out.append(n)
                if len(out) >= limit:
                    return out
    return out

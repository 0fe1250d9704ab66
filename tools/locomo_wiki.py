"""The LoCoMo ablation: dream's wiki as an extra retriever (``hybrid+wiki``).

``build_wiki(tree)`` takes one conversation's memory tree (``path → transcript text``, as
:func:`brainfs.tools.locomo.conversation_tree` makes it), runs dream offline on it and
returns the knowledge pages (``knowledge/*.md``, INDEX excluded: it cites nothing). It is the
``build_wiki`` argument of :func:`brainfs.tools.locomo.wiki_retriever`; :func:`evaluate_with_wiki`
wires both for a quick run.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from brainfs.cache.layout import INDEX_PATH, in_knowledge
from brainfs.dream.core import DictTree, dream

#: Extra settings for the ablation: every session in one run, pages for subjects met twice.
ABLATION_SETTINGS = {"max_sessions_per_run": 100000, "time_budget_seconds": 100000}


def build_wiki(tree: dict[str, str], include_summaries: bool = False, embedder=None,
               settings: dict | None = None) -> dict[str, str]:
    """Wiki files dream builds from ``tree`` (no S3, no disk writes)."""
    res = dream(DictTree(dict(tree)), embedder=embedder,
                settings={**ABLATION_SETTINGS, **(settings or {})})
    out = {}
    for p, t in res.staged.items():
        if in_knowledge(p) and p != INDEX_PATH:
            out[p] = t
        elif include_summaries and p.endswith("/summary.md"):
            out[p] = t
    return out


def evaluate_with_wiki(path: Path, limit_conversations: int | None = None,
                       limit_questions: int | None = None, include_summaries: bool = False,
                       retrievers=("bm25", "hybrid"), embedder=None) -> dict[str, Any]:
    """``tools.locomo.evaluate`` plus a ``hybrid+wiki`` retriever built by dream."""
    from brainfs.tools.locomo import evaluate, wiki_retriever

    def builder(tree: dict[str, str]) -> dict[str, str]:
        return build_wiki(tree, include_summaries=include_summaries)

    return evaluate(path, limit_conversations=limit_conversations, limit_questions=limit_questions,
                    retrievers=retrievers, embedder=embedder,
                    extra_retrievers={"hybrid+wiki": wiki_retriever(builder)})


def main() -> None:  # python -m brainfs.tools.locomo_wiki FILE [conversations]
    import json
    import sys

    f = Path(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) > 2 else None
    summ = "--summaries" in sys.argv
    with tempfile.TemporaryDirectory():
        print(json.dumps(evaluate_with_wiki(f, limit_conversations=n, include_summaries=summ)))


if __name__ == "__main__":
    main()

"""The user's agent as the wiki's writer: dream hands out its pending work and takes the
agent's page text back, through the same checks as a model's (``brainfs mcp``'s
``dream_pending`` and ``dream_submit`` tools, front/mcpserver.py).

* **Pending work** (:func:`pending`): a dry run of dream with :class:`AgentSynthesizer`
  lists every page and session summary whose evidence has no accepted text yet — a new
  page, a page whose facts changed, a page whose last text failed verification. Each item
  is the prompt a model would be given: the instructions (``PAGE_SYSTEM`` or
  ``SUMMARY_SYSTEM``), the numbered evidence, and a ``key`` that names exactly that
  evidence (a hash of the prompt).
* **Submission** (:func:`submit`): a real dream run with the agent's texts as the answers to
  those keys. Each text is parsed, rendered and verified like a model's (citations resolve,
  each sentence supported by its cited turn, no name, number or date its source does not
  hold); a page that fails is rendered deterministically and is pending again. The commit
  in the wiki's history names the agent ("written by agent NAME: …"). A key whose evidence
  changed since it was handed out is refused as ``stale``.

Accepted texts live in the dream state's answer cache, like a model's answers; a scheduled
run keeps them only with ``dream_synthesizer = "agent"`` (another synthesizer renders every
page its own way).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from brainfs.cache.layout import in_knowledge

from .core import RunResult
from .llm import AgentSynthesizer
from .sync import run_s3

#: What a text handed back must look like (told to the agent with its work).
HOW = ("Write each item's text from its evidence only, following its instructions, and "
       "give it back with dream_submit as {key: text}. Every sentence must end with "
       "[cite:N], N an evidence number of that item; a sentence its evidence does not "
       "support, or a citation of a number not listed, sends the page back to the "
       "deterministic rendering and the item stays pending.")


def pending(run_dry: Callable[[AgentSynthesizer], RunResult], limit: int = 10) -> dict[str, Any]:
    """The pages and summaries waiting for text, at most ``limit`` of them (pages first).
    ``run_dry(synth)`` runs dream without publishing and with ``force`` (it must render)."""
    synth = AgentSynthesizer()
    run_dry(synth)
    asks = sorted(synth.asks.values(), key=lambda a: (not in_knowledge(a.path), a.path))
    items = [{"key": a.key, "path": a.path, "instructions": a.system, "evidence": a.user}
             for a in asks[:max(0, limit)]]
    return {"pending": len(asks), "returned": len(items), "how": HOW, "items": items}


def submit(run_apply: Callable[[AgentSynthesizer], Any], answers: dict[str, str],
           agent: str) -> dict[str, Any]:
    """Publish the agent's ``answers`` (key → text) through a dream run; what became of each.
    ``run_apply(synth)`` runs dream and publishes (``force``); it returns a RunResult or a
    report holding one (``.result``) and maybe the commit (``.commit``)."""
    agent = " ".join(str(agent).split())[:80] or "agent"
    synth = AgentSynthesizer(agent, answers)
    out = run_apply(synth)
    res: RunResult = getattr(out, "result", out)
    items: dict[str, dict[str, str]] = {}
    for key in answers:
        ask = synth.asks.get(key)
        if ask is None:
            items[key] = {"status": "stale", "why": "no pending item has this key (its evidence "
                          "changed, or its text was already accepted): call dream_pending again"}
            continue
        why = synth.fallbacks.get(ask.path)
        items[key] = ({"path": ask.path, "status": "published"} if why is None and ask.path in synth.model_pages
                      else {"path": ask.path, "status": "rejected", "why": why or "not rendered"})
    published = sum(1 for v in items.values() if v["status"] == "published")
    return {"agent": agent, "published": published, "rejected": len(items) - published,
            "commit": getattr(out, "commit", None), "message": res.commit_message() if not res.nothing_new else "",
            "still_pending": len([a for a in synth.asks if a not in synth.cache]),
            "items": items}


def pending_s3(store: Any, workdir: Path, limit: int = 10) -> dict[str, Any]:
    """:func:`pending` over a corpus in S3 (a dry run: nothing is written, no lease)."""
    return pending(lambda s: run_s3(store, workdir, dry_run=True, synthesizer=s, force=True,
                                    reindex=False).result, limit)


def submit_s3(store: Any, workdir: Path, answers: dict[str, str], agent: str,
              embedder: Any = None, reindex: bool = True) -> dict[str, Any]:
    """:func:`submit` over a corpus in S3: a full run (lease, commit, upload, re-index)."""
    return submit(lambda s: run_s3(store, workdir, synthesizer=s, force=True, embedder=embedder,
                                   reindex=reindex, index_embedder=embedder), answers, agent)

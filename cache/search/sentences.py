"""Sentence-level dense matching: a passage scored by its best sentence, not its average.

A turn's vector is the mean of everything it says, and a conversation turn often says two
or three things ("Hey John, been a few days. In the meantime I joined a nearby church. How
is the campaign?"): a question about one of them ("where has Maria made friends?") meets
a vector diluted by the others. Scoring a passage by the cosine of its *best* sentence
(max-pooling over sentence vectors, as multi-vector retrievers do) lets the one relevant
sentence speak for the turn. Recall (``retrieval``) ranks the head of the fused list this
way and fuses that ranking as one more list (``RecallParams.sentence_weight``).

The sentence vectors are made at query time, for the few dozen candidates only, with the
same embedder as the question, and kept in a bounded in-process memo keyed by the
sentence's text and behind the per-user vector cache (``embedcache.with_cache``), which
keeps them across processes. No index format change.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from typing import TYPE_CHECKING, Iterable

from .embedcache import with_cache

if TYPE_CHECKING:  # numpy costs ~90 ms to import; the CLI's startup path imports us
    import numpy as np

    from .embedder import Embedder

#: A turn's text as the index stores it: "Speaker (8 May 2023): words…".
_TURN_RE = re.compile(r"^([^:(\n]+?)(?: \([^)\n]*\))?: (.*)$", re.S)
#: A sentence ends at . ! or ? before a capital, a quote or a bracket; a shared image's
#: caption ("[shared image: …]") is a sentence of its own.
_SPLIT_RE = re.compile(r"(?<=[.!?])\s+(?=[A-Z\"'\[])|\s(?=\[shared image:)")
#: Fragments shorter than this many words ("Wow!", "Thanks, Mel!") say nothing alone.
MIN_WORDS = 3
#: Sentences kept per passage: a long page section costs at most this many embeddings.
MAX_SENTENCES = 8
#: Sentence vectors kept in the memo (384 float32 each: 1.5 KB; 4,096 ≈ 6 MB — a mount's
#: memory is counted): a recall touches ~60; one the memo dropped is read back from the
#: per-user vector cache, not embedded again.
MEMO_SIZE = 4096


def sentences(text: str, speaker: str | None = None) -> list[str]:
    """The sentences of a passage to embed one by one: each of at least ``MIN_WORDS``
    words, a turn's prefixed with its speaker ("Maria: I joined a nearby church.") so a
    sentence keeps who said it; at most ``MAX_SENTENCES``. A passage with no such
    sentence is itself one. Never raises."""
    text = str(text or "").strip()
    if not text:
        return []
    prefix = ""
    m = _TURN_RE.match(text)
    if m and (speaker is None or m.group(1).strip() == speaker):
        prefix, text = m.group(1).strip() + ": ", m.group(2)
    parts = [p.strip() for p in _SPLIT_RE.split(text) if len(p.split()) >= MIN_WORDS]
    if not parts:
        return [prefix + text.strip()]
    return [prefix + p for p in parts[:MAX_SENTENCES]]


class SentenceMemo:
    """(model, sentence text) → unit vector, for at most ``size`` sentences (least
    recently used dropped first); thread-safe. One per process is enough: two indexes that
    hold the same turn share its vectors, and another model never sees them."""

    def __init__(self, size: int = MEMO_SIZE) -> None:
        self.size = size
        self._vecs: OrderedDict[tuple[str, str], np.ndarray] = OrderedDict()
        self._lock = threading.Lock()

    def vectors(self, texts: list[str], embedder: Embedder) -> tuple[list[np.ndarray], int]:
        """The vectors of ``texts`` (in order) and how many had to be embedded now."""
        model = str(getattr(embedder, "model_id", None) or getattr(embedder, "name", ""))
        with self._lock:
            missing = [t for t in dict.fromkeys(texts) if (model, t) not in self._vecs]
        made = {}
        if missing:
            for t, v in zip(missing, embedder.embed(missing)):
                made[t] = v
        with self._lock:
            out = []
            for t in texts:
                v = made.get(t)
                if v is None:
                    v = self._vecs[(model, t)]
                    self._vecs.move_to_end((model, t))
                out.append(v)
            for t, v in made.items():
                self._vecs[(model, t)] = v
            while len(self._vecs) > self.size:
                self._vecs.popitem(last=False)
        return out, len(missing)


MEMO = SentenceMemo()


def best_sentence_scores(rows: dict[int, dict], ids: Iterable[int], qvec: np.ndarray,
                         embedder: Embedder, memo: SentenceMemo | None = None
                         ) -> tuple[dict[int, float], int]:
    """For each chunk id of ``ids`` present in ``rows`` (chunk rows with ``text`` and
    ``speaker``), the highest cosine between ``qvec`` and one of its sentences; and how
    many sentences were embedded now. Raises what the embedder raises."""
    import numpy as np

    memo = MEMO if memo is None else memo
    owners: list[int] = []
    texts: list[str] = []
    for cid in ids:
        row = rows.get(cid)
        if row is None:
            continue
        for s in sentences(row.get("text") or "", row.get("speaker")):
            owners.append(cid)
            texts.append(s)
    if not texts:
        return {}, 0
    # behind the per-user vector cache too (when the embedder can be cached): a new
    # process — a CLI recall — then finds the sentences an earlier one embedded
    vecs, made = memo.vectors(texts, with_cache(embedder))
    q = np.asarray(qvec, dtype=np.float32).reshape(-1)
    sims = np.stack(vecs).astype(np.float32) @ q
    best: dict[int, float] = {}
    for cid, s in zip(owners, sims.tolist()):
        if s > best.get(cid, -2.0):
            best[cid] = s
    return best, made

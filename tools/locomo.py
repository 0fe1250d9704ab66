"""LoCoMo retrieval evaluation: evidence recall@k of brainfs recall on long conversations.

Each LoCoMo conversation becomes a memory tree in memory — one transcript per session,
``sessions/<conv>-s<N>/transcript.md``, in the exact transcript form the rest of brainfs
reads (frontmatter ``session``/``date``/``participants``; one ``[D3:7] Speaker: text``
paragraph per turn; a shared image's caption is kept in the turn as
``[shared image: …]``, as LoCoMo's own RAG baselines do). Each conversation is indexed in its own
temporary :class:`SearchIndex`, so retrieval is per conversation, and every question of
categories 1–4 is run through each retriever.

Metrics, per retriever, overall and per category, for k in 5, 10, 20:

* ``turn``    recall@k = share of the question's gold evidence turns (dia_ids) among the
  turns credited by the top-k passages (the official LoCoMo retrieval metric);
* ``session`` recall@k = share of the gold evidence's sessions hit by the top-k passages;
* ``tokens@k`` = mean size of a returned passage in MiniLM word pieces (and
  ``context_tokens@k``, the mean total of the k passages), so a retriever that wins by
  returning longer passages shows it.

**Answers in few tokens** (issue 12), per retriever: the share of questions of categories
1, 2 and 4 (yes/no answers left out) whose gold answer's :func:`content_words` all stand in
the first :data:`ANSWER_BUDGET` tokens of what recall returns — the cards' texts in recall's
order, as ``brainfs recall --json`` and a mount's ``.recall/<question> [k=40].json`` give
them (recall's own card cut, ``ANSWER_K`` passages asked for), counted in the word pieces the
context budget counts (:func:`read_within`). For ``hybrid+wiki`` that recall runs over
one index holding the transcripts *and* the wiki, as in a dreamt memory's mount.

Evidence ids are cleaned as the data's README asks: "D8:6; D9:17" is split, "D30:05"
unpadded, "D:11:26" read as D11:26; ids naming no turn of the conversation are dropped (and
counted); a question left with no evidence is skipped (and counted).

Retrievers are factories ``(ConversationContext) → (question, k) → [Passage]``; a passage
names the turns it counts for. ``bm25``, ``dense`` and ``hybrid`` are brainfs recall in the
matching mode; :func:`wiki_retriever` is the hook for ``hybrid+wiki`` — give it a wiki
builder (dream) and a wiki passage counts for the turns its own ``[cite:N]`` claims cite.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import re
import sys
import tempfile
import time
import unicodedata
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, NamedTuple

from brainfs.cache.layout import transcript_path
from brainfs.cache.search.chunker import human_date
from brainfs.cache.search.embedder import Embedder, load_embedder
from brainfs.cache.search.model import token_counter
from brainfs.cache.search.index import SearchIndex
from brainfs.cache.search import retrieval as _rt
from brainfs.cache.search.candidates import STRICT_FIRST
from brainfs.cache.search.cards import Card
from brainfs.cache.search.citations import cited_refs, cites_in
from brainfs.cache.search.fusion import ADJUST, FUSION, RRF_K
from brainfs.cache.search.queryterms import STOPWORDS

if TYPE_CHECKING:
    import numpy as np

#: The directory that holds ``locomo-dev.json`` (the LoCoMo data is not ours to ship: it is
#: never in the repository). Unset = no dev split here; tests then use the small synthetic
#: fixture in ``tests/data`` and benchmarks ask for ``--data``.
ENV_DIR = "BRAINFS_LOCOMO_DIR"
DEV_FILE = "locomo-dev.json"


def dev_split() -> Path | None:
    """``$BRAINFS_LOCOMO_DIR/locomo-dev.json``, or None when the variable is unset."""
    d = os.environ.get(ENV_DIR, "").strip()
    return Path(d).expanduser() / DEV_FILE if d else None


KS = (5, 10, 20)
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
DEFAULT_RETRIEVERS = ("bm25", "dense", "hybrid")
#: recall mode behind each built-in retriever name
RETRIEVER_MODES = {"bm25": "sparse", "dense": "dense", "hybrid": "hybrid"}
#: Cards are not cut during evaluation: a passage is scored (and counted in tokens) whole.
EVAL_MAX_CHARS = 100_000

_DIA_RE = re.compile(r"D\s*:?\s*(\d+)\s*:\s*(\d+)", re.I)
_REF_TURN_RE = re.compile(r"(?:^|/)sessions/([^/]+)/transcript\.md#(.+)$")


# --------------------------------------------------------------------------- input

class LocomoInputError(ValueError):
    """The eval file is not LoCoMo data; the message names the file and what is wrong."""


def _type_name(v: Any) -> str:
    return {dict: "an object", list: "a list", str: "a string", int: "a number",
            float: "a number", bool: "true/false", type(None): "null"}.get(type(v), type(v).__name__)


def read_samples(path: Path) -> list[dict[str, Any]]:
    """The samples of a LoCoMo-format file (a list of samples, or one sample), checked
    for the shape :func:`evaluate` reads; raises :class:`LocomoInputError` otherwise."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError:
        raise LocomoInputError(f"{path}: not UTF-8 text (expected LoCoMo JSON)") from None
    except OSError as e:
        raise LocomoInputError(f"{path}: {e.strerror or e}") from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        raise LocomoInputError(f"{path}: not valid JSON: {e.msg} at line {e.lineno}, "
                               f"column {e.colno}") from None
    if isinstance(data, dict):
        data = [data]
    if not isinstance(data, list):
        raise LocomoInputError(f"{path}: expected a list of LoCoMo samples (objects with "
                               f"'conversation' and 'qa'), found {_type_name(data)}")
    for i, sample in enumerate(data):
        where = f"{path}: sample {i + 1}"
        if not isinstance(sample, dict):
            raise LocomoInputError(f"{where} is {_type_name(sample)}, expected an object with "
                                   "'conversation' and 'qa'")
        if sample.get("sample_id"):
            where += f" ({sample['sample_id']})"
        conv = sample.get("conversation")
        if not isinstance(conv, dict):
            raise LocomoInputError(f"{where}: 'conversation' is "
                                   f"{'missing' if conv is None else _type_name(conv)}, expected "
                                   "an object with session_1, session_2, …")
        if not _sessions(conv):
            raise LocomoInputError(f"{where}: the conversation has no sessions (session_1, … "
                                   "lists of turns)")
        for n in _sessions(conv):
            for j, turn in enumerate(conv[f"session_{n}"]):
                if not isinstance(turn, dict):
                    raise LocomoInputError(f"{where}: session_{n} turn {j + 1} is "
                                           f"{_type_name(turn)}, expected an object with "
                                           "'speaker', 'dia_id' and 'text'")
        qa = sample.get("qa", [])
        if not isinstance(qa, list):
            raise LocomoInputError(f"{where}: 'qa' is {_type_name(qa)}, expected a list of questions")
        for j, q in enumerate(qa):
            if not isinstance(q, dict):
                raise LocomoInputError(f"{where}: question {j + 1} is {_type_name(q)}, expected "
                                       "an object with 'question', 'category' and 'evidence'")
            cat = q.get("category")
            if isinstance(cat, bool) or not isinstance(cat, (int, str, type(None))):
                raise LocomoInputError(f"{where}: question {j + 1} has category "
                                       f"{_type_name(cat)}, expected a number 1-5")
            if cat in CATEGORIES and not isinstance(q.get("question"), str):
                raise LocomoInputError(f"{where}: question {j + 1} has no 'question' text")
    return data


# --------------------------------------------------------------------------- conversion

def parse_locomo_date(value: str) -> str | None:
    """LoCoMo's "1:56 pm on 8 May, 2023" → "2023-05-08T13:56:00" (None if unparseable)."""
    s = " ".join(str(value or "").split())
    for fmt in ("%I:%M %p on %d %B, %Y", "%I:%M %p on %d %b, %Y", "%d %B, %Y", "%d %B %Y"):
        try:
            return _dt.datetime.strptime(s, fmt).isoformat()
        except ValueError:
            continue
    return None


def session_path(conv_id: str, n: int) -> str:
    """Tree path of a conversation's session transcript."""
    return transcript_path(f"{conv_id}-s{n}")


def _sessions(conv: dict[str, Any]) -> list[int]:
    nums = []
    for key, val in conv.items():
        m = re.fullmatch(r"session_(\d+)", key)
        if m and isinstance(val, list):
            nums.append(int(m.group(1)))
    return sorted(nums)


def _turn_text(turn: dict[str, Any]) -> str:
    text = " ".join(str(turn.get("text") or "").split())
    caption = turn.get("blip_caption")
    if caption:
        text = f"{text} [shared image: {' '.join(str(caption).split())}]".strip()
    return text


def conversation_tree(sample: dict[str, Any]) -> dict[str, str]:
    """One LoCoMo sample → {path: transcript text}, one transcript per session."""
    conv = sample["conversation"]
    conv_id = str(sample.get("sample_id") or "conv")
    participants = [p for p in (conv.get("speaker_a"), conv.get("speaker_b")) if p]
    tree: dict[str, str] = {}
    for n in _sessions(conv):
        date = parse_locomo_date(conv.get(f"session_{n}_date_time", ""))
        head = ["---", f"session: {conv_id}-s{n}"]
        if date:
            head.append(f"date: {date}")
        head += [f"participants: {json.dumps(participants)}", "---", ""]
        body = [f"[{t['dia_id']}] {t.get('speaker', '?')}: {_turn_text(t)}"
                for t in conv[f"session_{n}"] if t.get("dia_id")]
        tree[session_path(conv_id, n)] = "\n".join(head) + "\n" + "\n\n".join(body) + "\n"
    return tree


def question_time(sample: dict[str, Any]) -> _dt.datetime:
    """When a sample's questions are asked, recall's "now": the day after its last dated
    session (questions come after the conversation), or the current time if none is dated."""
    conv = sample["conversation"]
    dates = [d for d in (parse_locomo_date(conv.get(f"session_{n}_date_time", ""))
                         for n in _sessions(conv)) if d]
    when = (_dt.datetime.fromisoformat(max(dates)) + _dt.timedelta(days=1) if dates
            else _dt.datetime.now())
    return when.replace(tzinfo=_dt.timezone.utc)


def clean_evidence(raw: Iterable[Any], valid: set[str]) -> tuple[list[str], int]:
    """Clean a question's evidence ids; returns (ids naming real turns, number dropped)."""
    out: list[str] = []
    dropped = 0
    for item in raw or []:
        parts = [p for p in re.split(r"[;,]\s*|\s{2,}", str(item)) if p.strip()]
        for part in parts:
            m = _DIA_RE.search(part)
            if not m:
                dropped += 1
                continue
            did = f"D{int(m.group(1))}:{int(m.group(2))}"
            if did not in valid:
                dropped += 1
            elif did not in out:
                out.append(did)
    return out, dropped


def turn_session(dia_id: str) -> int | None:
    """Session number of a dia_id ("D3:7" → 3)."""
    m = _DIA_RE.fullmatch(dia_id)
    return int(m.group(1)) if m else None


def _content_hash(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).hexdigest()


# --------------------------------------------------------------------------- answers in few tokens

#: Tokens of recall an agent reads for the answer measure (the issue's "1,000 tokens").
ANSWER_BUDGET = 1000
#: Passages asked of recall for it: enough to fill the budget (a LoCoMo turn is ~46 word
#: pieces, a wiki passage at most recall's 800-character card), and what a mount answers
#: for ``.recall/<question> [k=40].json``.
ANSWER_K = 40
#: Categories the measure covers: multi-hop, temporal, single-hop (open-domain answers are
#: inferences, not words of the memory).
ANSWER_CATEGORIES = (1, 2, 4)

_ISO_DATE_RE = re.compile(r"\b(\d{4}-\d{2}-\d{2})(?:T[0-9:.]+)?\b")
_WORD_RE = re.compile(r"[^\W_]+")


def _fold(word: str) -> str:
    """A number without leading zeros; a noun without its plural ending."""
    if word.isdigit():
        return str(int(word))
    if len(word) <= 3:
        return word
    if word.endswith("ies"):
        return word[:-3] + "y"
    if word.endswith(("ses", "xes", "zes", "ches", "shes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def content_words(text: str) -> list[str]:
    """The content words of ``text``, in order: what must stand in recall's output for a
    gold answer to count as found there (the same rule reads the answer and the output).

    * case and accents: Unicode NFKC, lower case ("Café" = "café");
    * punctuation separates words and is dropped: "Piranesi, The Overstory" → piranesi,
      overstory; "1:52" → 1, 52; an apostrophe's tail is its own word ("Ines's" → ines);
    * numbers are words, however short, without leading zeros ("07" = "7"); number
      words stay words ("two" ≠ "2");
    * an ISO date reads as a person writes it: "2023-05-07" → 7, may, 2023;
    * stop words (``queryterms.STOPWORDS``, the list recall's keyword search drops) are
      dropped: "the", "a", "of", "before"…;
    * plural endings are folded: "groups" = "group", "stories" = "story", "boxes" =
      "box" ("bus", "glass", "tennis" stay); verb endings are not ("painted" ≠ "paint").
    """
    text = unicodedata.normalize("NFKC", text or "").replace("\u2019", "'")
    text = _ISO_DATE_RE.sub(lambda m: f" {human_date(m.group(1)) or m.group(1)} ", text)
    return [_fold(w) for w in _WORD_RE.findall(text.lower()) if w not in STOPWORDS]


def answer_scored(question: dict[str, Any]) -> bool:
    """Whether a LoCoMo question counts in the answer measure: category 1, 2 or 4, with an
    answer that is not yes/no and has content words."""
    if question.get("category") not in ANSWER_CATEGORIES:
        return False
    answer = str(question.get("answer", "")).strip()
    if not answer or answer.lower().rstrip(".!") in ("yes", "no"):
        return False
    return bool(content_words(answer))


def read_within(texts: list[str], budget: int,
                count: Callable[[list[str]], list[int]] | None = None) -> list[str]:
    """The first ``budget`` tokens of ``texts`` read in order: each text whole while it
    fits, the first that does not cut at a word boundary to what is left, then nothing.
    Tokens are the MiniLM word pieces the context budget counts (``count``, default
    :func:`model.token_counter`); a word piece never spans whitespace, so the pieces of
    texts read one after the other add up."""
    count = count or token_counter()
    sizes = count(list(texts))
    out: list[str] = []
    left = budget
    for text, n in zip(texts, sizes):
        if n <= left:
            out.append(text)
            left -= n
            continue
        words = text.split()
        lo, hi = 0, len(words)  # the most words whose pieces fit in what is left
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if count([" ".join(words[:mid])])[0] <= left:
                lo = mid
            else:
                hi = mid - 1
        if lo:
            out.append(" ".join(words[:lo]))
        break
    return out


def answer_found(answer: str, texts: list[str]) -> bool:
    """Whether every content word of ``answer`` stands in ``texts`` (what was read)."""
    want = set(content_words(answer))
    if not want:
        return False
    have: set[str] = set()
    for t in texts:
        have.update(content_words(t))
    return want <= have


#: question → the cards' texts recall returns for it, in order
Reader = Callable[[str], list[str]]


def recall_cards(index: SearchIndex, question: str, mode: str, embedder: Embedder | None,
                 now: _dt.datetime, k: int = ANSWER_K, **recall_kwargs: Any) -> list[Card]:
    """The cards brainfs recall returns from ``index`` in ``mode`` for the answer measure:
    ``k`` of them, with recall's own card cut (``max_chars`` left at its default) and wiki
    lines left to the returned turns they cite (``leave_to_turns``), as a mount and the CLI
    (``LocalIndex.search``); extra keyword arguments go to ``retrieval.retrieve``."""
    recall_kwargs.setdefault("leave_to_turns", True)
    return _rt.retrieve(index, question, k=k, embedder=embedder, now=now, mode=mode,
                        **recall_kwargs).cards


def recall_reader(index: SearchIndex, mode: str, embedder: Embedder | None,
                  now: _dt.datetime, k: int = ANSWER_K, **recall_kwargs: Any) -> Reader:
    """A :data:`Reader` over :func:`recall_cards`: the cards' texts, in recall's order."""

    def read(question: str) -> list[str]:
        return [c.text for c in recall_cards(index, question, mode, embedder, now, k, **recall_kwargs)]

    return read


def context_reader(ctx: ConversationContext, index: SearchIndex, files: dict[str, str],
                   name: str) -> Callable[[str, int], str]:
    """``window(question, budget)``: the text of the window ``brainfs context`` makes for the
    question over ``files`` (written to a folder of the conversation's workdir) searched in
    ``index`` — :func:`~brainfs.cache.context.assembly.assemble` with no reserve, as
    ``to_prompt`` gives it to a model, headers and all."""
    from brainfs.cache.context import assembly

    root = ctx.workdir / f"{name}-root"
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    src = assembly.MemorySource(root, index=index, embedder=ctx.embedder,
                                global_guide=ctx.workdir / "no-global-guide.md")

    def window(question: str, budget: int) -> str:
        return assembly.assemble(question, src, budget=budget, reserve=0, now=ctx.now).to_prompt()

    return window


# --------------------------------------------------------------------------- retrievers

@dataclass(frozen=True)
class Passage:
    """A retrieved passage and the turns (dia_ids) it is credited for."""

    ref: str
    text: str
    turns: frozenset[str]

    @property
    def sessions(self) -> frozenset[int]:
        return frozenset(s for s in (turn_session(t) for t in self.turns) if s is not None)


@dataclass
class ConversationContext:
    """What a retriever factory gets for one conversation."""

    conv_id: str
    tree: dict[str, str]
    index: SearchIndex
    embedder: Embedder | None
    now: _dt.datetime
    workdir: Path
    extra: dict[str, Any] = field(default_factory=dict)


Retriever = Callable[[str, int], list[Passage]]
RetrieverFactory = Callable[[ConversationContext], Retriever]


def passage_turns(ref: str, text: str, tree: dict[str, str],
                  sources_cache: dict[str, dict[int, str]] | None = None) -> frozenset[str]:
    """Turns a passage counts for: a transcript turn counts for itself; any other passage
    for the transcript turns its own ``[cite:N]`` markers cite (resolved through its file's
    frontmatter ``sources``; pass a dict as ``sources_cache`` to parse each file once)."""
    path, _, anchor = ref.partition("#")
    if _REF_TURN_RE.search(ref) and anchor:
        return frozenset([anchor])
    if sources_cache is None:
        refs = cited_refs(tree.get(path, ""))
    else:
        if path not in sources_cache:
            sources_cache[path] = cited_refs(tree.get(path, ""))
        refs = sources_cache[path]
    turns = set()
    for n in cites_in(text):
        target = refs.get(n, "")
        m = _REF_TURN_RE.search(target)
        if m:
            turns.add(m.group(2).strip())
    return frozenset(turns)


class ModeMismatch(RuntimeError):
    """A retriever answered in another mode than asked (a part of the index is missing)."""


def index_retriever(mode: str, **recall_kwargs: Any) -> RetrieverFactory:
    """Factory for brainfs recall over the conversation's index in ``mode`` (extra keyword
    arguments go to :func:`recall`, e.g. ``rrf_k`` for an ablation)."""

    def factory(ctx: ConversationContext) -> Retriever:
        def retrieve(question: str, k: int) -> list[Passage]:
            res = _rt.retrieve(ctx.index, question, k=k, embedder=ctx.embedder, now=ctx.now,
                               max_chars=EVAL_MAX_CHARS, mode=mode, **recall_kwargs)
            if res.mode != mode:
                # Scoring a degraded retriever under another's name would be a lie. The one
                # legitimate case is a question with no keyword in the corpus: BM25 then
                # answers "recent" and hybrid "dense" — that *is* those retrievers' answer.
                # Counted in degraded_queries.
                if not (mode == "sparse" and res.mode == "recent") and not (
                        mode == "hybrid" and res.mode == "dense"):
                    raise ModeMismatch(f"{mode} answered as {res.mode}: {res.why}")
                ctx.extra["degraded"] = True  # read and reset by evaluate() after each call
            return [Passage(c.ref, c.text, passage_turns(c.ref, c.text, ctx.tree)) for c in res.cards]

        # what this retriever's recall returns, for the answer measure (see evaluate)
        retrieve.read = recall_reader(ctx.index, mode, ctx.embedder, ctx.now,  # type: ignore[attr-defined]
                                      **recall_kwargs)
        if mode == "hybrid" and not recall_kwargs:
            # and the window `brainfs context` makes (which recalls in hybrid mode)
            retrieve.window = context_reader(ctx, ctx.index, ctx.tree, f"context-{mode}")  # type: ignore[attr-defined]
        return retrieve

    return factory


#: A wiki passage enters the top k only when it credits at least this many turns that no
#: higher passage credits: a claim that quotes one turn is that turn again in other words
#: (measured on LoCoMo: letting such passages in costs single-hop recall more than it
#: gives), while a passage gathering several turns is what the wiki adds.
WIKI_MIN_NEW_TURNS = 2


def wiki_retriever(build_wiki: Callable[[dict[str, str]], dict[str, str]],
                   mode: str = "hybrid", weight: float = 1.0,
                   min_new_turns: int = WIKI_MIN_NEW_TURNS,
                   params: _rt.RecallParams | None = None) -> RetrieverFactory:
    """Factory for ``hybrid+wiki``: ``build_wiki(tree)`` returns wiki files (path → text,
    e.g. ``knowledge/*.md`` written by dream from the same sessions).

    Two searches, fused by rank: the transcript index (the very list the plain retriever
    returns) and an index of the wiki alone. A passage at rank r of its list scores
    ``w / (RRF_K + r)`` (w = 1 for turns, ``weight`` for wiki passages), and the top k
    are taken in score order, skipping a passage whose turns are all credited by a higher
    one, and a wiki passage that adds fewer than ``min_new_turns`` new turns. Same k and
    the same transcript surface as the plain arm; a wiki passage counts for the turns its
    own ``[cite:N]`` claims cite. ``params`` go to the transcript search, which also takes
    the wiki's aliases for query expansion (one index holds both in a real memory)."""

    def factory(ctx: ConversationContext) -> Retriever:
        wiki = build_wiki(dict(ctx.tree))
        # one file per arm: two wiki arms in one evaluation must not share (and overwrite)
        # one index while resolving citations against their own pages
        closers = ctx.extra.setdefault("closers", [])
        ix = _closing_index(ctx, f"wiki-{len(closers)}.db", wiki)
        sources: dict[str, dict[int, str]] = {}  # YAML is slow: parse each page's sources once
        groups = ix.alias_groups()
        # The answer measure reads what a dreamt memory's mount returns: one index holding
        # the transcripts and the wiki, plain recall (the fusion below is the evidence
        # ablation's, not something a mount does).
        whole = _closing_index(ctx, f"memory-{len(closers)}.db", {**ctx.tree, **wiki})

        def retrieve(question: str, k: int) -> list[Passage]:
            # 3k deep: passages skipped as already credited must not leave the list short
            lists = []
            for index, w, files in ((ctx.index, 1.0, ctx.tree), (ix, weight, wiki)):
                res = _rt.retrieve(index, question, k=3 * k, embedder=ctx.embedder, now=ctx.now,
                                   max_chars=EVAL_MAX_CHARS, mode=mode,
                                   params=params if index is ctx.index else None,
                                   alias_groups=groups)
                lists.append([(w / (RRF_K + r), index is ix, r,
                               Passage(c.ref, c.text, passage_turns(c.ref, c.text, files, sources)))
                              for r, c in enumerate(res.cards, 1)])
            return _merge_wiki(lists[0] + lists[1], k, min_new_turns)

        retrieve.read = recall_reader(whole, mode, ctx.embedder, ctx.now)  # type: ignore[attr-defined]
        retrieve.window = context_reader(ctx, whole, {**ctx.tree, **wiki},  # type: ignore[attr-defined]
                                         f"context-wiki-{len(closers)}")
        return retrieve

    return factory


def _closing_index(ctx: ConversationContext, name: str, files: dict[str, str]) -> SearchIndex:
    """An index of ``files`` in the conversation's workdir, closed with the conversation."""
    ix = SearchIndex(ctx.workdir / name)
    ix.refresh([(p, _content_hash(t)) for p, t in files.items()], lambda p: files[p].encode(),
               ctx.embedder)
    ctx.extra.setdefault("closers", []).append(ix.close)
    return ix


def _merge_wiki(scored: list[tuple[float, bool, int, Passage]], k: int,
                min_new_turns: int) -> list[Passage]:
    """The top ``k`` of (score, is wiki, rank, passage) in score order, skipping a passage
    whose turns are all credited by a higher one and a wiki passage adding too few."""
    ranked = sorted(scored, key=lambda x: (-x[0], x[1], x[2]))
    out: list[Passage] = []
    covered: set[str] = set()
    for _score, is_wiki, _r, p in ranked:
        new = p.turns - covered
        if not new or (is_wiki and len(new) < min_new_turns):
            continue
        out.append(p)
        covered |= p.turns
        if len(out) == k:
            break
    return out


class _QueryCache:
    """Wraps an embedder and memoises every text's vector: dense and hybrid embed the same
    question, and the wiki arm indexes the conversation's turns a second time (with its
    pages, as one memory). A conversation's few thousand vectors are a few MB."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self._memo: dict[str, Any] = {}

    def embed(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        missing = [t for t in dict.fromkeys(texts) if t not in self._memo]
        if missing:
            for t, v in zip(missing, self.inner.embed(missing)):
                self._memo[t] = v
        if not texts:
            return self.inner.embed(texts)
        return np.stack([self._memo[t] for t in texts])


class EmbeddingCache:
    """An embedder that remembers every vector it made, on disk: text → vector, keyed by
    the model's exact identity (``model_id``: torch and the ONNX int8 export share a name
    but not their vectors), in one ``.npz`` file. For experiments and repeated evaluations only
    (the dev split's 2,760 turns take ~90 s to embed on 2 CPUs, then milliseconds); keep
    the file outside the repository (e.g. under /tmp). Call :meth:`save` to persist."""

    def __init__(self, inner: Embedder, path: Path) -> None:
        import numpy as np

        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.path = Path(path)
        self._key = getattr(inner, "model_id", inner.name)
        self._vecs: dict[str, Any] = {}
        self._dirty = False
        if self.path.is_file():
            try:
                with np.load(self.path, allow_pickle=False) as z:
                    if str(z["name"]) == self._key:
                        for t, v in zip(z["texts"].tolist(), z["vectors"]):
                            self._vecs[t] = v
            except Exception as e:  # noqa: BLE001 - a broken cache is only slower
                print(f"embedding cache {self.path} unreadable ({e}); starting empty", file=sys.stderr)

    def embed(self, texts: list[str]) -> np.ndarray:
        import numpy as np

        missing = [t for t in dict.fromkeys(texts) if t not in self._vecs]
        if missing:
            for t, v in zip(missing, self.inner.embed(missing)):
                self._vecs[t] = np.asarray(v, dtype=np.float32)
            self._dirty = True
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        return np.stack([self._vecs[t] for t in texts])

    def save(self) -> None:
        """Write the cache file (atomically) when something new was embedded."""
        import numpy as np

        if not self._dirty:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        texts = list(self._vecs)
        tmp = self.path.with_name(self.path.name + ".tmp.npz")
        np.savez(tmp, name=np.array(self._key), texts=np.array(texts),
                 vectors=np.stack([self._vecs[t] for t in texts]) if texts
                 else np.zeros((0, self.dim), np.float32))
        tmp.replace(self.path)
        self._dirty = False


# --------------------------------------------------------------------------- evaluate

def _mean(xs: list[float]) -> float:
    return round(sum(xs) / len(xs), 4) if xs else 0.0


def _answers_block(found: list[_Outcome], budget: int,
                   detail: bool) -> dict[str, Any]:
    """The answer measure of one retriever: overall, by category and by conversation."""

    def share(xs: list[bool]) -> float:
        return round(sum(xs) / len(xs), 4) if xs else 0.0

    out: dict[str, Any] = {"budget_tokens": budget, "k": ANSWER_K, "questions": len(found),
                           "share": share([f for *_, f in found]), "by_category": {},
                           "by_conversation": {}}
    for cat in ANSWER_CATEGORIES:
        xs = [f for c, _, _, f in found if c == cat]
        if xs:
            out["by_category"][str(cat)] = {"name": CATEGORIES[cat], "questions": len(xs),
                                            "share": share(xs)}
    for cid in dict.fromkeys(c for _, c, _, _ in found):
        xs = [f for _, c, _, f in found if c == cid]
        out["by_conversation"][cid] = {"questions": len(xs), "share": share(xs)}
    if detail:
        out["detail"] = [{"conversation": cid, "qa": i, "category": c, "found": f}
                         for c, cid, i, f in found]
    return out


class _Outcome(NamedTuple):
    """One question's answer-measure outcome for one retriever."""

    category: int
    conversation: str
    qa: int  # the question's number in its sample's qa
    found: bool


class _Row(NamedTuple):
    """One question's evidence metrics for one retriever (``turn@k``, ``session@k``,
    ``tokens@k``, ``context_tokens@k``, ``ms``: the ``questions_detail`` keys)."""

    category: int
    conversation: str
    metrics: dict[str, float]


@dataclass
class _IndexStats:
    """Indexing totals over the conversations (the output's ``index`` block)."""

    files: int = 0
    chunks: int = 0
    seconds: float = 0.0
    embed_seconds: float = 0.0
    bytes: int = 0


@dataclass
class _Tally:
    """What :func:`evaluate` counts over the conversations, per retriever and in total."""

    rows: dict[str, list[_Row]]
    answers: dict[str, list[_Outcome]]
    timing: dict[str, float]
    #: the answer measure through ``brainfs context``'s window, for the retrievers that have one
    context_answers: dict[str, list[_Outcome]] = field(default_factory=dict)
    degraded: dict[str, int] = field(default_factory=dict)
    questions: int = 0
    skipped: int = 0
    dropped_ids: int = 0
    index: _IndexStats = field(default_factory=_IndexStats)

    @classmethod
    def start(cls, names: Iterable[str]) -> _Tally:
        names = list(names)
        return cls(rows={n: [] for n in names}, answers={n: [] for n in names},
                   timing={n: 0.0 for n in names})


class _Settings(NamedTuple):
    """The options of one :func:`evaluate` run that every conversation shares."""

    ks: tuple[int, ...]
    limit_questions: int | None
    answer_budget: int
    now: _dt.datetime | None
    progress: bool


class _Tokens:
    """Token counts of passage texts, memoised (the same turns come back for many questions)."""

    def __init__(self, count: Callable[[list[str]], list[int]]) -> None:
        self.count = count
        self._memo: dict[str, int] = {}

    def __call__(self, texts: list[str]) -> list[int]:
        missing = [t for t in dict.fromkeys(texts) if t not in self._memo]
        for t, n in zip(missing, self.count(missing)):
            self._memo[t] = n
        return [self._memo[t] for t in texts]


def evaluate(path: Path, limit_conversations: int | None = None,
             limit_questions: int | None = None,
             retrievers: Iterable[str] = DEFAULT_RETRIEVERS,
             embedder: Embedder | None = None, progress: bool = False,
             extra_retrievers: dict[str, RetrieverFactory] | None = None,
             ks: tuple[int, ...] = KS, conversations: Iterable[str] | None = None,
             per_question: bool = False, answer_budget: int = ANSWER_BUDGET,
             now: _dt.datetime | None = None) -> dict[str, Any]:
    """Evaluate evidence recall@k on a LoCoMo-format file; returns the
    ``brainfs eval locomo --json`` object (see docs/ARCHITECTURE.md) plus index and config details.

    ``limit_conversations`` takes the first N conversations; ``limit_questions`` the first
    N questions of categories 1–4 *per conversation*. ``retrievers`` are built-in names
    ("bm25", "dense", "hybrid"); ``extra_retrievers`` adds named factories (e.g.
    ``{"hybrid+wiki": wiki_retriever(dream_builder)}``). The embedder is loaded when a
    retriever needs it and none is given. ``progress`` prints one line per conversation
    on stderr. ``conversations`` keeps only the samples with these ids (e.g. a held-out
    subset), applied before ``limit_conversations``. ``per_question`` adds each
    retriever's per-question metrics (``questions_detail``: category, conversation,
    metrics) — what cross-validation selects on — and, under ``answers``, each scored
    question's outcome.

    ``answer_budget`` is the token budget of the answer measure (``answers`` per
    retriever: share, questions, by category and conversation). ``now`` anchors recall's
    recency for every conversation (default: the day after each one's last session; a
    comparison with a live mount passes the current time).
    """
    data = read_samples(path)
    if conversations is not None:
        wanted = set(conversations)
        data = [s for s in data if str(s.get("sample_id")) in wanted]
    if limit_conversations is not None:
        data = data[:limit_conversations]
    factories = _factories(retrievers, extra_retrievers)
    if embedder is None and any(n != "bm25" for n in factories):
        embedder = load_embedder()
    qemb = _QueryCache(embedder) if embedder is not None else None
    tokens = _Tokens(token_counter())
    settings = _Settings(ks, limit_questions, answer_budget, now, progress)
    tally = _Tally.start(factories)
    for ci, sample in enumerate(data):
        _evaluate_conversation(ci, sample, factories, qemb, tokens, settings, tally)

    out_retrievers = {name: _retriever_entry(name, rs, tally, ks, per_question, answer_budget)
                      for name, rs in tally.rows.items()}
    secs = tally.index.seconds
    return {
        "questions": tally.questions,
        "conversations": len(data),
        "skipped_questions": tally.skipped,
        "dropped_evidence_ids": tally.dropped_ids,
        "ks": list(ks),
        "retrievers": out_retrievers,
        "index": {**{k: round(v, 3) if isinstance(v, float) else v
                     for k, v in asdict(tally.index).items()},
                  "chunks_per_s": round(tally.index.chunks / secs, 1) if secs else 0.0},
        "config": {"fusion": f"{FUSION}(k={RRF_K})+{ADJUST}", "strict_first": STRICT_FIRST,
                   "embedder": embedder.name if embedder is not None else None,
                   "data": Path(path).name},
    }


def _factories(retrievers: Iterable[str],
               extra: dict[str, RetrieverFactory] | None) -> dict[str, RetrieverFactory]:
    """The built-in retrievers by name, then the extra ones; ValueError on an unknown name."""
    names = list(retrievers)
    unknown = [n for n in names if n not in RETRIEVER_MODES]
    if unknown:
        raise ValueError(f"unknown retriever(s) {unknown}; built-ins are {list(RETRIEVER_MODES)}")
    factories: dict[str, RetrieverFactory] = {n: index_retriever(RETRIEVER_MODES[n]) for n in names}
    factories.update(extra or {})
    return factories


def _evaluate_conversation(ci: int, sample: dict[str, Any],
                           factories: dict[str, RetrieverFactory], qemb: Embedder | None,
                           tokens: _Tokens, settings: _Settings, tally: _Tally) -> None:
    """Index one conversation in a temporary index and score its questions."""
    conv_id = str(sample.get("sample_id") or f"conv-{ci}")
    tree = conversation_tree(sample)
    conv = sample["conversation"]
    valid = {t["dia_id"] for n in _sessions(conv) for t in conv[f"session_{n}"] if t.get("dia_id")}
    conv_now = settings.now or question_time(sample)
    questions = [q for q in sample.get("qa", []) if q.get("category") in CATEGORIES]
    if settings.limit_questions is not None:
        questions = questions[:settings.limit_questions]

    with tempfile.TemporaryDirectory(prefix="brainfs-locomo-") as tmp:
        ix = SearchIndex(Path(tmp) / "index.db")
        ctx = None
        try:
            st = ix.refresh([(p, _content_hash(t)) for p, t in tree.items()],
                            lambda p: tree[p].encode("utf-8"), qemb)
            tally.index.files += st["files_indexed"]
            tally.index.chunks += st["chunks"]
            tally.index.seconds += st["seconds"]
            tally.index.embed_seconds += st["embed_seconds"]
            ctx = ConversationContext(conv_id, tree, ix, qemb, conv_now, Path(tmp))
            built = {n: f(ctx) for n, f in factories.items()}
            qa_pos = {id(q): i for i, q in enumerate(sample.get("qa", []))}  # dicts may repeat
            for q in questions:
                _read_answers(q, conv_id, qa_pos[id(q)], built, tokens, settings, tally)
                _score_evidence(q, conv_id, valid, built, ctx, tokens, settings, tally)
        finally:
            for close in (ctx.extra.get("closers", []) if ctx else []):
                close()
            ix.close()  # checkpoints the WAL: the size below is the index at rest
        tally.index.bytes += sum(f.stat().st_size for f in Path(tmp).glob("index.db*"))
    if settings.progress:
        print(f"[locomo] {conv_id}: {len(tree)} sessions, {st['chunks']} turns indexed, "
              f"{len(questions)} questions", file=sys.stderr, flush=True)


def _read_answers(q: dict[str, Any], conv_id: str, qa: int, built: dict[str, Retriever],
                  tokens: _Tokens, settings: _Settings, tally: _Tally) -> None:
    """The answer measure: is the gold answer in the first tokens each retriever's recall
    returns?"""
    if not answer_scored(q):
        return
    for name, retrieve in built.items():
        read = getattr(retrieve, "read", None)
        if read is not None:
            seen = read_within(read(str(q["question"])), settings.answer_budget, tokens.count)
            tally.answers[name].append(_Outcome(int(q["category"]), conv_id, qa,
                                                answer_found(str(q["answer"]), seen)))
        window = getattr(retrieve, "window", None)
        if window is not None:
            text = window(str(q["question"]), settings.answer_budget)
            tally.context_answers.setdefault(name, []).append(
                _Outcome(int(q["category"]), conv_id, qa, answer_found(str(q["answer"]), [text])))


def _score_evidence(q: dict[str, Any], conv_id: str, valid: set[str],
                    built: dict[str, Retriever], ctx: ConversationContext, tokens: _Tokens,
                    settings: _Settings, tally: _Tally) -> None:
    """Evidence recall@k of each retriever for one question (skipped without evidence)."""
    gold, nd = clean_evidence(q.get("evidence", []), valid)
    tally.dropped_ids += nd
    if not gold:
        tally.skipped += 1
        return
    tally.questions += 1
    gold_set = set(gold)
    gold_sessions = {turn_session(g) for g in gold}
    for name, retrieve in built.items():
        t = time.perf_counter()
        passages = retrieve(str(q["question"]), max(settings.ks))
        took = time.perf_counter() - t
        tally.timing[name] += took
        if ctx.extra.pop("degraded", False):
            tally.degraded[name] = tally.degraded.get(name, 0) + 1
        m = _metrics(passages, tokens([p.text for p in passages]), gold_set, gold_sessions,
                     settings.ks, took)
        tally.rows[name].append(_Row(int(q["category"]), conv_id, m))


def _metrics(passages: list[Passage], sizes: list[int], gold: set[str],
             gold_sessions: set[int | None], ks: tuple[int, ...], took: float) -> dict[str, float]:
    """One question's metrics at each k: turn and session recall, passage tokens."""
    m: dict[str, float] = {"ms": round(took * 1000, 2)}
    for k in ks:
        top = passages[:k]
        turns = set().union(*(p.turns for p in top)) if top else set()
        sess = set().union(*(p.sessions for p in top)) if top else set()
        m[f"turn@{k}"] = len(gold & turns) / len(gold)
        m[f"session@{k}"] = len(gold_sessions & sess) / len(gold_sessions)
        m[f"tokens@{k}"] = (sum(sizes[:k]) / len(top)) if top else 0.0
        m[f"context_tokens@{k}"] = float(sum(sizes[:k]))
    return m


def _retriever_entry(name: str, rs: list[_Row], tally: _Tally, ks: tuple[int, ...],
                     per_question: bool, answer_budget: int) -> dict[str, Any]:
    """One retriever's block of the output: recall@k overall, by category and conversation,
    passage sizes, speed, and the answer measure."""

    def block(ms: list[dict[str, float]], level: str) -> dict[str, float]:
        return {f"recall@{k}": _mean([m[f"{level}@{k}"] for m in ms]) for k in ks}

    ms = [m for _, _, m in rs]
    entry: dict[str, Any] = {"turn": block(ms, "turn"), "session": block(ms, "session"),
                             "by_category": {}}
    for cat in sorted(CATEGORIES):
        cms = [m for c, _, m in rs if c == cat]
        if cms:
            entry["by_category"][str(cat)] = {"name": CATEGORIES[cat], "questions": len(cms),
                                              "turn": block(cms, "turn"),
                                              "session": block(cms, "session")}
    entry["by_conversation"] = {}
    for cid in dict.fromkeys(c for _, c, _ in rs):
        cms = [m for _, c, m in rs if c == cid]
        entry["by_conversation"][cid] = {"questions": len(cms), "turn": block(cms, "turn"),
                                         "session": block(cms, "session")}
    for k in ks:
        entry[f"tokens@{k}"] = round(_mean([m[f"tokens@{k}"] for m in ms]), 1)
    for k in ks:
        entry[f"context_tokens@{k}"] = round(_mean([m[f"context_tokens@{k}"] for m in ms]), 1)
    entry["ms_per_query"] = round(1000 * tally.timing[name] / max(1, len(ms)), 2)
    entry["degraded_queries"] = tally.degraded.get(name, 0)
    if per_question:
        entry["questions_detail"] = [{"category": c, "conversation": cid, **m} for c, cid, m in rs]
    if tally.answers[name]:
        entry["answers"] = _answers_block(tally.answers[name], answer_budget, per_question)
    if tally.context_answers.get(name):
        entry["answers_context"] = _answers_block(tally.context_answers[name], answer_budget,
                                                  per_question)
    return entry

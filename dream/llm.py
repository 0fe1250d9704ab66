"""The model-backed synthesizers: the user's own model (:class:`LLMSynthesizer`, through the
``openai`` or ``anthropic`` SDK, :mod:`brainfs.dream.llmclient`) and the user's agent
(:class:`AgentSynthesizer`, whose pages come back through MCP, :mod:`brainfs.dream.agentwork`).

Both implement :class:`brainfs.dream.synth.Synthesizer`, so they plug into the same phases
(session summary, subject page, index line) and whatever they write goes through the same
validation and semantic verification as the deterministic synthesizer's output.

What the model writes, and what it does not:

* For a page: a short **synthesis** — what is true now about the subject, in prose, one
  sentence a line, each ending with the citation of the evidence it rests on — and the
  page's **statements** (``## Timeline`` bullets), each cited. It is given **numbered
  evidence** (:func:`page_evidence`: the page's current lines and events, each with the turn
  it quotes); ``[cite:N]`` names evidence N, and the page's ``sources`` list is built so that
  N is exactly that evidence's source. For a session summary: cited bullets.
* Frontmatter, the title, the intro line, the current lines, ``## Corrections``, ``## Across
  sessions``, ``## Superseded``, ``## Threads`` and ``## Related`` are rendered here,
  deterministically: what is current and what supersedes what is decided by the fact
  machinery (:mod:`brainfs.dream.pages`, the records), not by a model.

A page is the model's or the deterministic writer's, never a mix of a failed answer and
repairs: **a page whose model text fails falls back whole to the deterministic rendering**,
and the run says how many did and why (``stats["synth"]``, the commit message):

* the endpoint is down (connection refused, timeout, HTTP 429/5xx after the SDK's retries,
  4xx) or the run's token/cost budget is spent: that page and every later one of the run are
  rendered deterministically (a circuit breaker: a dead endpoint costs one request's
  attempts per worker, not one per page); the state records ``+fallback`` so the next run
  renders again;
* the answer has no cited sentence, or cites evidence it was not given;
* a sentence the model wrote is rejected by verification (its citation does not support it,
  or it states a name, number or date its source does not hold): core asks
  :meth:`LLMSynthesizer.checked`, which hands back the deterministic rendering.

An uncited sentence is never published: it is dropped at parsing and counted
(``sentences_uncited``) — nothing could verify it.

Requests: the pages of a build are first rendered deterministically while their prompts are
collected; :meth:`LLMSynthesizer.ask_pending` then asks them, ``llm_concurrency`` at once,
with progress, and core renders again from the answers. Answers are cached in the dream
state by prompt hash (``synth_cache``): an unchanged page is never asked again, and a rerun
over the same input writes the same bytes.
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from typing import Any

from brainfs.backend.config import ConfigError
from brainfs.cache.layout import page_path, summary_path

from .llmclient import (Answer, Budget, BudgetExhausted, ChatClient, LLMError, LLMSettings,
                        client_for)
from .synth import (Claim, DeterministicSynthesizer, PageSpec, Sources, claim_line, finish_page,
                    frontmatter, index_line, intro, thread_lines)
from .text import content_words
from .validate import frontmatter_of
from .verify import hard_check

log = logging.getLogger(__name__)

__all__ = ["AgentSynthesizer", "LLMError", "LLMSettings", "LLMSynthesizer", "PAGE_SYSTEM",
           "SUMMARY_SYSTEM", "page_evidence", "parse_answer", "synthesizer_from_config"]

#: Sections the model writes: the synthesis (prose, right under the intro, read as what is
#: true now) and the statements under ``## Timeline``; the others are rendered
#: deterministically: the current lines and corrections above the timeline, what was
#: superseded below it.
LIVE_SECTIONS = ("Timeline",)
FIXED_BEFORE = ("Now", "Corrections")
FIXED_SECTIONS = ("Across sessions", "Superseded", "Threads")
#: The evidence a page's model is given: its current lines and its events.
EVIDENCE_SECTIONS = ("Now", "Timeline")

PAGE_SYSTEM = """You maintain one page of a personal knowledge wiki. You are given numbered \
evidence: statements quoted from conversation turns, each with its date; "now" marks what is \
true now, "event" something that happened.
Write two parts, using only the evidence:
## Summary
Two to four sentences of prose on what is true now about the subject, one sentence per \
line. End every sentence with the number of the evidence that supports it, written \
[cite:N] (several: [cite:1,3]).
## Timeline
One short bullet per event ("- 2026-04-02 — ..."), in date order, in the third person, each \
ending with [cite:N].
Rules:
- Never cite a number that is not listed. Never add anything the evidence does not say.
- Keep every name, number and date exactly as the evidence gives it.
- You may link another subject as [[slug]], only with a slug from the list given.
- Output Markdown only: no preamble, no code fences, no frontmatter, no title."""

SUMMARY_SYSTEM = """You summarize one conversation session for a personal memory. You are \
given numbered evidence: the session's key statements, each with its speaker.
Rules:
- Write 2 to 6 bullet points ("- ..."), in the third person, naming who said or did what.
- Use only the evidence. End every bullet with [cite:N] naming the evidence that supports it.
- Output the bullets only: no heading, no preamble, no code fences."""


# --------------------------------------------------------------------------- parsing

_FENCE_RE = re.compile(r"^\s*```")
_BULLET_RE = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+(.*\S)\s*$")
_HEADING_RE = re.compile(r"^\s*#{1,6}\s+(.*?)\s*#*\s*$")
# Citation spellings models produce: [cite:3], [cite: 3], [cite 3], [cite:1, 2], [3], [1,2].
_CITE_LOOSE_RE = re.compile(r"\[\s*(?:cite\s*:?\s*)?(\d+(?:\s*,\s*\d+)*)\s*\]", re.I)
_CITE_RE = re.compile(r"\[cite:(\d+(?:,\d+)*)\]")
_LINK_RE = re.compile(r"\[\[([^\]|#]+)(?:[#|][^\]]*)?\]\]")
#: Headings of the prose part (what is true now); any other heading starts statements.
_PROSE_HEADINGS = frozenset({"summary", "synthesis", "now", "current", "overview", "about"})


@dataclass
class Parsed:
    """A model answer reduced to what may be published: cited prose sentences and cited
    statements; what was dropped, counted."""

    sentences: list[str] = field(default_factory=list)   # "… [cite:N]." — the synthesis
    bullets: list[str] = field(default_factory=list)     # "- … [cite:N]" — the statements
    uncited: int = 0      # sentences and bullets without a citation: dropped, never published
    bad_cites: list[str] = field(default_factory=list)   # citations of evidence not given
    dropped: int = 0      # fences, frontmatter, titles, lead-ins

    @property
    def usable(self) -> bool:
        return bool(self.sentences or self.bullets)

    @property
    def written(self) -> int:
        """Sentences the model wrote that carry a citation (what verification judges)."""
        return len(self.sentences) + len(self.bullets)


def _split_sentences(line: str) -> tuple[list[str], str]:
    """A prose line cut after each citation (and the punctuation that follows it): the
    cited sentences, and what trails the last citation."""
    out, pos = [], 0
    for m in re.finditer(r"\[cite:[^\]]*\][.!?;,]*", line):
        seg = line[pos:m.end()].strip()
        if seg:
            out.append(seg)
        pos = m.end()
    return out, line[pos:].strip()


def _says_something(text: str) -> bool:
    """Whether a sentence states anything besides its citations (verification passes an
    empty claim, so an answer cut to "[cite:1]" must not count as a sentence)."""
    return bool(content_words(_CITE_RE.sub(" ", text)))


def parse_answer(answer: str, n_evidence: int, slugs: set[str]) -> Parsed:
    """What of ``answer`` may be published. Defensive: fences, frontmatter, headings and
    lead-ins ("Here is the page:") are dropped; citations are normalized to ``[cite:N]``; an
    unknown ``[[link]]`` is unlinked; a sentence or bullet without a citation is dropped and
    counted (nothing could verify it); a citation of a number outside 1..``n_evidence`` is
    recorded in ``bad_cites`` (the caller fails the page: it would resolve to a source the
    model never saw). Prose lines (under a Summary heading, or any non-bullet line) are the
    synthesis; bullets are statements."""
    out = Parsed()
    lines = answer.replace("\r\n", "\n").split("\n")
    if lines and lines[0].strip() == "---":  # a frontmatter block the model added
        end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
        if end is not None:
            out.dropped += end + 1
            lines = lines[end + 1:]
    prose = False  # the part a heading chose; without headings a line's shape decides

    def cite(m: re.Match[str]) -> str:
        nums = [int(x) for x in re.split(r"\s*,\s*", m.group(1).strip())]
        out.bad_cites += [str(n) for n in nums if not 1 <= n <= n_evidence]
        return f"[cite:{','.join(map(str, nums))}]"

    def link(m: re.Match[str]) -> str:
        slug = m.group(1).strip()
        return m.group(0) if slug in slugs else slug

    for line in lines:
        if not line.strip():
            continue
        if _FENCE_RE.match(line):
            out.dropped += 1
            continue
        h = _HEADING_RE.match(line)
        if h:
            prose = h.group(1).strip().rstrip(":").lower() in _PROSE_HEADINGS
            out.dropped += 1
            continue
        b = _BULLET_RE.match(line)
        text = _LINK_RE.sub(link, _CITE_LOOSE_RE.sub(cite, b.group(1) if b else line.strip()))
        if b and not prose:
            if not _says_something(text):
                out.dropped += 1  # a bare "[cite:2]": nothing to verify, nothing to read
            elif _CITE_RE.search(text):
                out.bullets.append(f"- {text}")
            else:
                out.uncited += 1
            continue
        got, rest = _split_sentences(text)
        out.dropped += len([g for g in got if not _says_something(g)])
        out.sentences += [g for g in got if _says_something(g)]
        if rest.endswith(":") and not got:
            out.dropped += 1  # a lead-in: "Here is the page:"
        elif content_words(rest):
            out.uncited += 1
    return out


# --------------------------------------------------------------------------- evidence


@dataclass
class Evidence:
    """A page's or summary's numbered evidence: ``refs`` is the file's sources list, so that
    ``[cite:N]`` is evidence N; ``lines`` are the prompt's; ``text`` number → what it says."""

    refs: Sources
    lines: list[str]
    text: dict[int, str]


def _number(claims: list[Claim], kind: dict[str, str] | None = None) -> Evidence:
    """Number the claims by source (claims from one turn share a number)."""
    refs = Sources()
    text: dict[int, list[str]] = {}
    meta: dict[int, str] = {}
    for c in claims:
        n = int(refs.cite(c.source)[6:-1])
        text.setdefault(n, []).append(c.evidence or c.text)
        label = (kind or {}).get(c.section, c.section.lower())
        # a current line carries its own date ("since 20 June 2023"); an event its day
        meta.setdefault(n, f"{c.date}, {label}" if c.date else
                        label if label == "now" else f"undated, {label}")
    lines = [f"[{n}] ({meta[n]}) " + " / ".join(dict.fromkeys(text[n])) for n in sorted(text)]
    return Evidence(refs, lines, {n: " ".join(t) for n, t in text.items()})


def page_evidence(spec: PageSpec) -> Evidence:
    """The evidence a page's writer (a model or an agent) is given: the page's current lines
    ("now", in the wiki's words with their dates) and its events (each quoting its turn).

    This is the seam for the fact records (``cache/facts/records.py``,
    ``knowledge/.facts.jsonl``): a current line is one open record, an event a record of
    the timeline; once pages are rendered from the records, this function numbers the page's
    open records and events instead of its claims, and nothing else here changes."""
    claims = [c for c in spec.claims if c.section in EVIDENCE_SECTIONS]
    return _number(claims, {"Now": "now", "Timeline": "event"})


def page_prompt(spec: PageSpec, ev: Evidence) -> str:
    """The user prompt for one page."""
    slugs = sorted(s for s, _n in spec.related)
    return (f"Subject: {spec.title} ({spec.type})\n"
            + ("Linkable pages: " + ", ".join(f"[[{s}]] {spec.titles.get(s, s)}" for s in slugs)
               + "\n" if slugs else "")
            + "\nEvidence:\n" + "\n".join(ev.lines) + "\n")


# --------------------------------------------------------------------------- synthesizer


@dataclass
class _Ask:
    """A prompt waiting for its answer."""

    key: str
    path: str
    system: str
    user: str


class LLMSynthesizer:
    """Pages and summaries written by a model, with the deterministic synthesizer as the
    fallback (see the module docstring for when)."""

    caches_answers = True
    #: whether an answer verification rejected stays cached (a model at temperature 0 would
    #: answer the same: asking again costs and changes nothing; an agent may do better)
    keep_rejected = True

    def __init__(self, settings: LLMSettings, client: ChatClient | None = None) -> None:
        self.settings = settings
        self._client = client
        self.budget = Budget(settings)
        self.det = DeterministicSynthesizer()
        self.cache: dict[str, str] = {}
        self.fresh: dict[str, str] = {}          # key → answer asked this run
        self.pending: dict[str, _Ask] = {}       # key → prompt to ask
        self.used: set[str] = set()
        self.hits = 0
        self.asked = 0
        self.ask_seconds = 0.0                   # wall time spent waiting for answers
        self.down: str | None = None             # why the endpoint was given up for this run
        self.fallbacks: dict[str, str] = {}      # path → why it was rendered deterministically
        self.transient: set[str] = set()         # paths that fell back for the endpoint's sake
        self.model_pages: dict[str, dict] = {}   # path → {key, lines, written, uncited}
        self.verified: dict[str, tuple[int, int]] = {}  # path → (sentences, rejected)
        self._alt: dict[str, tuple] = {}         # path → how to render it deterministically
        self._gists: dict[str, str] = {}         # slug → a checked one-line gist

    @property
    def client(self) -> ChatClient:
        if self._client is None:
            self._client = client_for(self.settings)
        return self._client

    # -- identity and state
    @property
    def name(self) -> str:
        return f"llm:{self.settings.model}"

    @property
    def writer(self) -> str:
        """Who wrote the pages, as the report and the commit message say it."""
        return f"LLM {self.settings.model}"

    @property
    def effective_name(self) -> str:
        """What the state records: a run that fell back for a passing reason (the endpoint,
        the budget, an unusable answer) is not the model's rendering, so the next run (whose
        name differs) renders again."""
        return self.name + ("+fallback" if self.transient else "")

    def bind_cache(self, cache: dict[str, str]) -> None:
        """Answers are cached in the dream state by prompt hash: an unchanged page is not
        asked again, and a rerun over the same input gives the same bytes (no empty commit)."""
        self.cache = cache

    def prune_cache(self) -> None:
        """Drop answers no file of this run used (the cache holds only the current wiki)."""
        for k in [k for k in self.cache if k not in self.used]:
            del self.cache[k]

    def report(self) -> dict[str, Any]:
        model = [p for p in self.model_pages if p not in self.fallbacks]
        sentences = sum(n for n, _r in self.verified.values())
        rejected = sum(r for _n, r in self.verified.values())
        uncited = sum(m["uncited"] for m in self.model_pages.values())
        reasons: dict[str, int] = {}
        for why in self.fallbacks.values():
            k = why.split(":")[0]
            reasons[k] = reasons.get(k, 0) + 1
        return {"synthesizer": self.name, "llm_requests": getattr(self._client, "calls", 0),
                "asked": self.asked, "ask_seconds": round(self.ask_seconds, 2),
                "cache_hits": self.hits, "endpoint_error": self.down,
                "files_by_model": len(model), "files_fallback": len(self.fallbacks),
                "fallback_reasons": dict(sorted(reasons.items())),
                "sentences_checked": sentences, "sentences_rejected": rejected,
                "sentences_uncited": uncited, **self.budget.report(),
                "fallbacks": dict(sorted(self.fallbacks.items()))}

    def note(self) -> str | None:
        """One line for the commit message: how many files the model wrote, how many fell
        back to the deterministic rendering and why."""
        if not self.fallbacks and not self.model_pages:
            return None
        model = len([p for p in self.model_pages if p not in self.fallbacks])
        head = f"{self.writer}: {model} file(s) written"
        if not self.fallbacks:
            return head
        head += f", {len(self.fallbacks)} file(s) rendered deterministically"
        return head + (f" — {self.down}" if self.down else
                       " — " + "; ".join(f"{p}: {w}" for p, w in list(self.fallbacks.items())[:3]))

    def fallback(self, path: str) -> str | None:
        """The deterministic rendering of the same input, for a file validation rejected."""
        alt = self._alt.get(path)
        if alt is None:
            return None
        kind, args = alt
        return self.det.page(*args) if kind == "page" else self.det.summary(*args)

    # -- asking
    def _key(self, system: str, user: str) -> str:
        return hashlib.sha256(f"{self.settings.model}\x00{system}\x00{user}".encode()).hexdigest()[:24]

    def _answer(self, path: str, system: str, user: str) -> tuple[str, str] | None:
        """(key, answer) from the cache or this run's answers; None while it is still to be
        asked (the prompt is queued for :meth:`ask_pending`) or cannot be."""
        key = self._key(system, user)
        if key in self.cache:
            self.hits += 1
            self.used.add(key)
            return key, self.cache[key]
        if key in self.fresh:
            return key, self.fresh[key]
        self.pending.setdefault(key, _Ask(key, path, system, user))
        return None

    def _not_asked(self, path: str) -> str:
        """Why ``path`` has no answer (the reason its deterministic rendering stands)."""
        if self.down:
            self.transient.add(path)
            return "budget spent" if "budget" in self.down.split(":")[0] else "endpoint unavailable"
        return "not asked yet"

    def ask_pending(self, progress: Any = None) -> bool:
        """Ask the queued prompts, ``llm_concurrency`` at once (with progress); True when an
        answer came back (core renders the wiki again). A failing endpoint or a spent budget
        stops the asking: what is left is rendered deterministically."""
        todo = [a for a in self.pending.values() if a.key not in self.fresh]
        self.pending.clear()
        if not todo or self.down:
            return False
        if progress is not None:
            progress.phase(f"asking {self.writer}", total=len(todo))
        got = 0
        t0 = time.monotonic()
        with ThreadPoolExecutor(max_workers=max(1, self.settings.concurrency)) as pool:
            futs = {pool.submit(self._ask_one, a): a for a in todo}
            for f in as_completed(futs):
                if f.result():
                    got += 1
                if progress is not None:
                    progress.step()
        self.ask_seconds += time.monotonic() - t0
        if progress is not None:
            progress.done(f"{got} answered" + (f"; {self.down}" if self.down else ""))
        return True  # rendered again: with the answers, or saying why there are none

    def _ask_one(self, a: _Ask) -> bool:
        if self.down:
            return False
        try:
            self.budget.check()
            ans: Answer = self.client.complete(a.system, a.user)
        except BudgetExhausted as e:
            self.down = str(e)
            return False
        except LLMError as e:
            if not self.down:
                self.down = f"endpoint unavailable: {e}"
                log.warning("dream: %s; rendering deterministically for the rest of this run", e)
            return False
        self.budget.spend(ans)
        self.asked += 1
        self.fresh[a.key] = ans.text
        return True

    def _take(self, key: str, answer: str) -> None:
        """A usable answer goes into the cache (an unusable one is not kept: asked again)."""
        self.cache[key] = answer
        self.used.add(key)

    # -- the Synthesizer interface
    def page(self, spec: PageSpec) -> str:
        path = page_path(spec.slug)
        self._alt[path] = ("page", (spec,))
        self.fallbacks.pop(path, None)
        self.transient.discard(path)
        self.model_pages.pop(path, None)
        if not any(c.section in EVIDENCE_SECTIONS for c in spec.claims):
            return self.det.page(spec)
        ev = page_evidence(spec)
        slugs = {s for s, _n in spec.related}
        got = self._answer(path, PAGE_SYSTEM, page_prompt(spec, ev))
        if got is None:
            self.fallbacks[path] = self._not_asked(path)
            return self.det.page(spec)
        parsed = parse_answer(got[1], len(ev.refs.refs), slugs)
        why = self._unusable(parsed)
        if why:
            self.fallbacks[path] = why
            self.transient.add(path)
            return self.det.page(spec)
        self._take(*got)
        text, lines = self._render_page(spec, ev, parsed)
        self.model_pages[path] = {"key": got[0], "lines": lines, "written": parsed.written,
                                  "uncited": parsed.uncited}
        self._gists[spec.slug] = self._gist(parsed, ev.text)
        return text

    @staticmethod
    def _unusable(parsed: Parsed) -> str | None:
        if parsed.bad_cites:
            return "cited evidence it was not given: " + ", ".join(parsed.bad_cites[:5])
        if not parsed.usable:
            return "answer had no cited sentence"
        return None

    def _render_page(self, spec: PageSpec, ev: Evidence, parsed: Parsed) -> tuple[str, set[str]]:
        """The page with the model's synthesis under the intro and its statements as the
        timeline (the deterministic timeline when it wrote none); and the model's lines."""
        refs = ev.refs
        lines = [f"# {spec.title}", "", intro(spec), ""]
        if parsed.sentences:
            lines += [*parsed.sentences, ""]
        for section in FIXED_BEFORE:
            cs = [c for c in spec.claims if c.section == section]
            if cs:
                lines += ([] if section == "Now" else [f"## {section}", ""])
                lines += [claim_line(c, refs.cite) for c in cs] + [""]
        timeline = parsed.bullets or [claim_line(c, refs.cite) for c in spec.claims
                                      if c.section == "Timeline"]
        if timeline:
            lines += ["## Timeline", "", *timeline, ""]
        for section in FIXED_SECTIONS:
            cs = [c for c in spec.claims if c.section == section]
            if not cs:
                continue
            lines += [f"## {section}", ""]
            lines += (thread_lines(cs, refs.cite) if section == "Threads"
                      else [*(claim_line(c, refs.cite) for c in cs), ""])
        return finish_page(spec, lines, refs.refs, self.name), {*parsed.sentences, *parsed.bullets}

    def summary(self, session: str, date: str | None, title: str, participants: list[str],
                turns: int, claims: list[Claim]) -> str:
        path = summary_path(session)
        args = (session, date, title, participants, turns, claims)
        self._alt[path] = ("summary", args)
        self.fallbacks.pop(path, None)
        self.transient.discard(path)
        self.model_pages.pop(path, None)
        if not claims:
            return self.det.summary(*args)
        ev = _number(claims)
        user = (f"Session {session}" + (f" on {date}" if date else "")
                + f", participants: {', '.join(participants) or 'unknown'}.\n\nEvidence:\n"
                + "\n".join(ev.lines) + "\n")
        got = self._answer(path, SUMMARY_SYSTEM, user)
        if got is None:
            self.fallbacks[path] = self._not_asked(path)
            return self.det.summary(*args)
        parsed = parse_answer(got[1], len(ev.refs.refs), set())
        # a summary is bullets: prose sentences count as bullets too
        bullets = parsed.bullets + [f"- {s}" for s in parsed.sentences]
        why = self._unusable(parsed)
        if why:
            self.fallbacks[path] = why
            self.transient.add(path)
            return self.det.summary(*args)
        self._take(*got)
        self.model_pages[path] = {"key": got[0], "lines": set(bullets), "written": len(bullets),
                                  "uncited": parsed.uncited}
        lines = [f"# Session {session}" + (f" — {date}" if date else ""), "",
                 f"Participants: {', '.join(participants) or 'unknown'}. {turns} turns.", "",
                 *bullets]
        meta = {"session": session, "date": date or "", "title": title, "type": "summary",
                "participants": participants, "turns": turns, "sources": ev.refs.refs,
                "generator": self.name}
        return frontmatter(meta) + "\n" + "\n".join(lines).rstrip() + "\n"

    def checked(self, path: str, text: str, bad_lines: list[int]) -> str | None:
        """Verification's verdict on a file (``bad_lines``: body lines holding a rejected
        claim). A file whose model-written sentence was rejected falls back whole: the
        deterministic rendering is returned (core verifies it in turn); None keeps ``text``."""
        info = self.model_pages.get(path)
        if info is None:
            return None
        body = frontmatter_of(text)[1].split("\n")
        mine = [i for i, ln in enumerate(body) if ln in info["lines"]]
        bad = sorted(set(mine) & set(bad_lines))
        self.verified[path] = (len(mine), len(bad))
        if not bad:
            return None
        self.fallbacks[path] = f"failed verification: {len(bad)} of {len(mine)} sentence(s)"
        self._rejected(info["key"])
        return self.fallback(path)

    def _rejected(self, key: str) -> None:
        """An answer verification rejected: kept or forgotten (see ``keep_rejected``)."""
        if not self.keep_rejected:
            self.cache.pop(key, None)
            self.used.discard(key)

    def index_line(self, spec: PageSpec) -> str:
        """The deterministic line, with the model's first checked sentence as the gist when
        the page kept the model's text and that sentence is clearly supported by its
        evidence: INDEX.md is not verified after rendering (it has no sources) and prefills
        every agent's prompt."""
        gist = self._gists.get(spec.slug)
        if spec.gist or not gist or page_path(spec.slug) in self.fallbacks:
            return self.det.index_line(spec)  # a current line says more than an event
        return index_line(spec, gist)

    @staticmethod
    def _gist(parsed: Parsed, ev_text: dict[int, str]) -> str:
        for b in parsed.sentences + parsed.bullets:
            m = re.search(r"\[cite:(\d+)\]", b)
            if not m or int(m.group(1)) not in ev_text:
                continue
            claim = re.sub(r"\s*\[cite:[^\]]*\]", "", b.removeprefix("- "))
            claim = claim.replace("[[", "").replace("]]", "").strip()
            src = ev_text[int(m.group(1))]
            cw = set(content_words(claim))
            if cw and len(cw & set(content_words(src))) / len(cw) >= 0.8 and hard_check(claim, src):
                return claim if len(claim) <= 90 else claim[:87].rsplit(" ", 1)[0] + "…"
        return ""


class AgentSynthesizer(LLMSynthesizer):
    """Pages written by the user's agent through MCP (:mod:`brainfs.dream.agentwork`): the
    prompts are the model's, the answers the agent's. Nothing is asked of any endpoint: a
    page whose answer the agent has not given is rendered deterministically and waits in
    the pending work (not a fallback the next run must retry: the agent decides when)."""

    keep_rejected = False  # a rejected page is pending again: the agent may write it better

    def __init__(self, agent: str = "agent", submitted: dict[str, str] | None = None) -> None:
        super().__init__(LLMSettings(None, "agent"))
        self.agent = agent
        self.submitted = dict(submitted or {})
        self.asks: dict[str, _Ask] = {}    # every prompt of this run without a cached answer

    @property
    def name(self) -> str:
        return "agent"

    @property
    def writer(self) -> str:
        return f"agent {self.agent}"

    @property
    def effective_name(self) -> str:
        return self.name

    def _key(self, system: str, user: str) -> str:
        return hashlib.sha256(f"agent\x00{system}\x00{user}".encode()).hexdigest()[:24]

    def _not_asked(self, path: str) -> str:
        return "waiting for the agent"

    def ask_pending(self, progress: Any = None) -> bool:
        """The agent's submitted answers for the queued prompts (no request is made)."""
        got = False
        for a in self.pending.values():
            self.asks[a.key] = a
            if a.key in self.submitted and a.key not in self.fresh:
                self.fresh[a.key] = self.submitted[a.key]
                self.asked += 1
                got = True
        self.pending.clear()
        return got

    def report(self) -> dict[str, Any]:
        out = super().report()
        out["synthesizer"] = f"agent:{self.agent}"
        out["waiting"] = sorted(p for p, w in self.fallbacks.items() if w == "waiting for the agent")
        return out

    def note(self) -> str | None:
        """The commit message's line: the agent named, what it wrote, what fell back."""
        done = [p for p in self.model_pages if p not in self.fallbacks]
        failed = {p: w for p, w in self.fallbacks.items() if w != "waiting for the agent"}
        if not done and not failed:
            return None
        out = f"written by agent {self.agent}: {len(done)} file(s)"
        if failed:
            out += (f", {len(failed)} rendered deterministically — "
                    + "; ".join(f"{p}: {w}" for p, w in list(failed.items())[:3]))
        return out


def synthesizer_from_config(cfg: Any, choice: str | None = None):
    """The synthesizer a command asked for: ``choice`` (the ``--synth`` flag) or
    ``cfg.dream_synthesizer``. ``llm`` needs a model (and, for an OpenAI-compatible
    endpoint that is not OpenAI's, a base URL): a clear error if not. ``agent`` renders what
    the user's agent wrote through MCP, deterministically where it has not."""
    which = (choice or getattr(cfg, "dream_synthesizer", "deterministic") or "deterministic").lower()
    if which == "deterministic":
        return DeterministicSynthesizer()
    if which == "agent":
        return AgentSynthesizer()
    if which != "llm":
        raise ConfigError(f"unknown synthesizer {which!r} (use llm, agent or deterministic)")
    provider = getattr(cfg, "llm_provider", "openai")
    if provider == "openai" and not cfg.llm_base_url and not cfg.llm_api_key:
        raise ConfigError("the llm synthesizer needs an endpoint: set BRAINFS_LLM_BASE_URL or "
                          "OPENAI_BASE_URL (e.g. http://127.0.0.1:8000/v1), or OPENAI_API_KEY "
                          "for OpenAI's own; ANTHROPIC_API_KEY with llm_provider = anthropic")
    if provider == "anthropic" and not cfg.llm_api_key:
        raise ConfigError("the anthropic provider needs a key: set ANTHROPIC_API_KEY")
    if not cfg.llm_model:
        raise ConfigError("the llm synthesizer needs a model name: set BRAINFS_LLM_MODEL")
    return LLMSynthesizer(settings_from_config(cfg))


def settings_from_config(cfg: Any) -> LLMSettings:
    """The client's settings from the typed config (``backend/config.py``)."""
    return LLMSettings(
        base_url=cfg.llm_base_url, model=cfg.llm_model, api_key=cfg.llm_api_key,
        timeout=float(cfg.llm_timeout), max_attempts=int(cfg.llm_max_attempts),
        provider=cfg.llm_provider, max_output_tokens=int(cfg.llm_max_output_tokens),
        concurrency=int(cfg.llm_concurrency), max_tokens_per_run=int(cfg.llm_max_tokens_per_run),
        max_cost_per_run=float(cfg.llm_max_cost_per_run),
        price_input_per_mtok=float(cfg.llm_price_input_per_mtok),
        price_output_per_mtok=float(cfg.llm_price_output_per_mtok))

"""An LLM synthesizer over any OpenAI-compatible ``/v1/chat/completions`` endpoint.

It implements :class:`brainfs.dream.synth.Synthesizer`, so it plugs into the same phases
(session summary, subject page, index line) and everything it writes goes through the same
validation and semantic verification as the deterministic synthesizer's output.

What the model decides, and what it does not:

* The model writes the *live* claims of a page (sections Preferences / Decisions / Facts)
  and the bullets of a session summary, from **numbered evidence** (the extracted facts, each
  quoting its turn). It must cite by number: ``[cite:N]`` names evidence N, and the page's
  ``sources`` list is built so that N is exactly that evidence's source.
* Frontmatter, the title, the intro line, ``## Related``, ``## Superseded`` and
  ``## Corrections`` are rendered here, deterministically: what supersedes what is decided by
  the corrections and contradiction machinery in :mod:`brainfs.dream.core`, not by a model.

Failure handling (decided, and documented in README.md):

* **Endpoint down** (connection refused, timeout, HTTP 429/5xx after ``max_attempts``, a
  non-JSON answer, HTTP 4xx such as a bad key): the run does not fail; that file and every
  later one of the run are rendered by :class:`DeterministicSynthesizer` (a circuit breaker,
  so a dead endpoint costs one timeout, not one per page). The run's stats and git commit
  message say so, and the synthesizer's name in the dream state records the fallback, so the
  next run re-renders with the model.
* **An answer with nothing usable** (no bullet carrying a citation) is not published: that
  file is rendered deterministically and the run reports it.
* **A usable but malformed answer** (a bullet without a citation, a citation to a number
  that was not offered) is published *to validation*, which rejects the file; the previous
  version is kept (or, for a file that has no previous version, the deterministic rendering
  from :meth:`LLMSynthesizer.fallback`).
* **A claim its citation does not support** is dropped by semantic verification.

No real LLM is reachable from the machine this was developed on; the protocol is tested
against a loopback HTTP server speaking ``/v1/chat/completions`` (tests/dream/test_dream_llm.py).
"""

from __future__ import annotations

import hashlib
import logging
import re
import time
from dataclasses import dataclass, field
from typing import Any

from .synth import (Claim, DeterministicSynthesizer, PageSpec, Sources, claim_line, finish_page,
                    frontmatter, index_line, intro, thread_lines)
from .text import content_words

log = logging.getLogger(__name__)

#: Sections the model writes; the others are rendered deterministically: the current lines
#: and corrections above the timeline, what was superseded below it.
LIVE_SECTIONS = ("Timeline",)
FIXED_BEFORE = ("Now", "Corrections")
FIXED_SECTIONS = ("Across sessions", "Superseded", "Threads")

PAGE_SYSTEM = """You maintain one page of a personal knowledge wiki. You are given numbered \
evidence: statements quoted from conversation turns, each with its date and speaker.
Rules:
- Use only the evidence. Do not add anything it does not say.
- Write the page's timeline: one short bullet ("- ...") per event, in the third person, \
in date order, starting with the date given with the evidence ("- 2026-04-02 — ...").
- End every bullet with the number of the evidence that supports it, written [cite:N] \
(several: [cite:1,3]). Never cite a number that is not listed.
- Keep every name, number and date exactly as the evidence gives it.
- Put the bullets under one heading: ## Timeline.
- You may link another subject as [[slug]], only with a slug from the list given.
- Output Markdown only: no preamble, no code fences, no frontmatter, no title."""

SUMMARY_SYSTEM = """You summarize one conversation session for a personal memory. You are \
given numbered evidence: the session's key statements, each with its speaker.
Rules:
- Write 2 to 6 bullet points ("- ..."), in the third person, naming who said or did what.
- Use only the evidence. End every bullet with [cite:N] naming the evidence that supports it.
- Output the bullets only: no heading, no preamble, no code fences."""


class LLMError(RuntimeError):
    """The endpoint cannot be used for this run (down, timing out, refusing the request)."""


@dataclass(frozen=True)
class LLMSettings:
    """Where and how to call the model (from :class:`brainfs.backend.config.Config`)."""

    base_url: str            # e.g. http://127.0.0.1:8000/v1 (the OPENAI_BASE_URL convention)
    model: str
    api_key: str | None = None
    timeout: float = 60.0    # seconds per request
    max_attempts: int = 3    # 1 + retries on transient errors
    temperature: float = 0.0  # as repeatable as the endpoint allows


class ChatClient:
    """A minimal ``POST {base_url}/chat/completions`` client on httpx (the ``openai``
    package is not installed here, and one endpoint is all dream needs)."""

    def __init__(self, settings: LLMSettings) -> None:
        self.s = settings
        self.url = settings.base_url.rstrip("/") + "/chat/completions"
        self.calls = 0

    def complete(self, system: str, user: str) -> str:
        """The assistant message's content; raises :class:`LLMError` when the endpoint
        fails after ``max_attempts``. Transient errors (429, 5xx, the network) are retried
        with backoff, waiting what a ``Retry-After`` asks (up to 30 s)."""
        import httpx

        body = {"model": self.s.model, "temperature": self.s.temperature,
                "messages": [{"role": "system", "content": system},
                             {"role": "user", "content": user}]}
        headers = {"Accept": "application/json"}
        if self.s.api_key:
            headers["Authorization"] = f"Bearer {self.s.api_key}"
        last = "no attempt"
        wait = 0.0
        with httpx.Client(timeout=self.s.timeout) as client:
            for attempt in range(max(1, self.s.max_attempts)):
                if attempt:
                    time.sleep(wait or min(4.0, 0.25 * 2 ** (attempt - 1)))
                wait = 0.0
                self.calls += 1
                try:
                    r = client.post(self.url, json=body, headers=headers)
                except httpx.HTTPError as e:
                    last = f"{self.url}: {e or type(e).__name__}"
                    continue
                if r.status_code >= 400:
                    last = f"HTTP {r.status_code} from {self.url}"
                    if r.status_code == 429 or r.status_code >= 500:
                        wait = _retry_after(r.headers.get("Retry-After"))
                        continue
                    raise LLMError(last + " (not retried: check the model name and API key)")
                try:
                    content = r.json()["choices"][0]["message"]["content"]
                except (ValueError, KeyError, IndexError, TypeError):
                    last = f"{self.url}: answer is not a chat completion"
                    continue
                if not isinstance(content, str):
                    last = f"{self.url}: answer has no text content"
                    continue
                return content
        raise LLMError(f"LLM endpoint unavailable after {self.s.max_attempts} attempt(s): {last}")


def _retry_after(value: str | None) -> float:
    """Seconds a ``Retry-After`` header asks for (delta seconds or an HTTP date), capped at
    30 s; 0 when absent or unreadable (the caller's backoff applies)."""
    if not value:
        return 0.0
    try:
        secs = float(value)
    except ValueError:
        from email.utils import parsedate_to_datetime

        try:
            secs = parsedate_to_datetime(value).timestamp() - time.time()
        except (TypeError, ValueError):
            return 0.0
    return max(0.0, min(30.0, secs))


# --------------------------------------------------------------------------- parsing

_FENCE_RE = re.compile(r"^\s*```")
_BULLET_RE = re.compile(r"^\s*(?:[-*+•]|\d+[.)])\s+(.*\S)\s*$")
_HEADING_RE = re.compile(r"^\s*#{1,6}\s+(.*?)\s*#*\s*$")
# Citation spellings models produce: [cite:3], [cite: 3], [cite 3], [cite:1, 2], [3], [1,2].
_CITE_LOOSE_RE = re.compile(r"\[\s*(?:cite\s*:?\s*)?(\d+(?:\s*,\s*\d+)*)\s*\]", re.I)
_LINK_RE = re.compile(r"\[\[([^\]|#]+)(?:[#|][^\]]*)?\]\]")


@dataclass
class Parsed:
    """A model answer reduced to what may be published."""

    bullets: list[tuple[str, str]] = field(default_factory=list)  # (section, "- … [cite:N]")
    dropped: int = 0  # prose, titles and fences thrown away

    @property
    def usable(self) -> bool:
        return any("[cite:" in b for _s, b in self.bullets)


def parse_answer(answer: str, n_evidence: int, slugs: set[str],
                 sections: tuple[str, ...] = LIVE_SECTIONS) -> Parsed:
    """Keep the bullets of ``answer`` under known headings, with citations normalized to
    ``[cite:N]``. Defensive: fences, frontmatter, titles and prose are dropped (prose
    carries no citation and could not be verified); an unknown ``[[link]]`` is unlinked; a
    citation to a number outside 1..``n_evidence`` is written ``[cite:N?]`` so that
    validation rejects the file instead of it resolving to a source the model never saw."""
    out = Parsed()
    lines = answer.replace("\r\n", "\n").split("\n")
    if lines and lines[0].strip() == "---":  # a frontmatter block the model added
        end = next((i for i in range(1, len(lines)) if lines[i].strip() == "---"), None)
        if end is not None:
            out.dropped += end + 1
            lines = lines[end + 1:]
    by_name = {s.lower(): s for s in sections}
    current = sections[-1]

    def cite(m: re.Match[str]) -> str:
        nums = [int(x) for x in re.split(r"\s*,\s*", m.group(1).strip())]
        bad = [n for n in nums if not 1 <= n <= n_evidence]
        return f"[cite:{','.join(map(str, nums))}{'?' if bad else ''}]"

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
            name = h.group(1).strip().rstrip(":").lower()
            if name in by_name:
                current = by_name[name]
            else:
                out.dropped += 1
            continue
        b = _BULLET_RE.match(line)
        if not b:
            out.dropped += 1
            continue
        text = _CITE_LOOSE_RE.sub(cite, b.group(1))
        text = _LINK_RE.sub(link, text)
        out.bullets.append((current, f"- {text}"))
    return out


# --------------------------------------------------------------------------- synthesizer


#: evidence 1..n is cited first, so [cite:N] is evidence N
_Refs = Sources


def _evidence(claims: list[Claim]) -> tuple[_Refs, list[str], dict[int, str]]:
    """Number the claims by source (claims from one turn share a number). Returns the
    refs, the prompt lines and number → evidence text (for checking index gists)."""
    refs = _Refs()
    text: dict[int, list[str]] = {}
    meta: dict[int, str] = {}
    for c in claims:
        n = int(refs.cite(c.source)[6:-1])
        text.setdefault(n, []).append(c.evidence or c.text)
        meta.setdefault(n, f"{c.date or 'undated'}, {c.section.lower()}")
    lines = [f"[{n}] ({meta[n]}) " + " / ".join(text[n]) for n in sorted(text)]
    return refs, lines, {n: " ".join(t) for n, t in text.items()}


class LLMSynthesizer:
    """Pages and summaries written by a model, with the deterministic synthesizer as the
    fallback (see the module docstring for when)."""

    def __init__(self, settings: LLMSettings, client: ChatClient | None = None) -> None:
        self.settings = settings
        self.client = client or ChatClient(settings)
        self.det = DeterministicSynthesizer()
        self.cache: dict[str, str] = {}
        self.used: set[str] = set()
        self.hits = 0
        self.down: str | None = None           # why the endpoint was given up for this run
        self.fallbacks: dict[str, str] = {}    # path → why it was rendered deterministically
        self._alt: dict[str, tuple] = {}        # path → how to render it deterministically
        self._gists: dict[str, str] = {}        # slug → a checked one-line gist

    caches_answers = True

    # -- identity and state
    @property
    def name(self) -> str:
        return f"llm:{self.settings.model}"

    @property
    def effective_name(self) -> str:
        """What the state records: a run that fell back is not the model's rendering, so
        the next run (whose name differs) renders again."""
        return self.name + ("+fallback" if self.fallbacks else "")

    def bind_cache(self, cache: dict[str, str]) -> None:
        """Answers are cached in the dream state by prompt hash: an unchanged page is not
        asked again, and a rerun over the same input gives the same bytes (no empty commit)."""
        self.cache = cache

    def prune_cache(self) -> None:
        """Drop answers no file of this run used (the cache holds only the current wiki)."""
        for k in [k for k in self.cache if k not in self.used]:
            del self.cache[k]

    def report(self) -> dict[str, Any]:
        return {"synthesizer": self.name, "llm_requests": self.client.calls,
                "cache_hits": self.hits, "endpoint_error": self.down,
                "fallbacks": dict(sorted(self.fallbacks.items()))}

    def note(self) -> str | None:
        """One line for the commit message when the model was not used everywhere."""
        if not self.fallbacks:
            return None
        head = f"LLM {self.settings.model}: {len(self.fallbacks)} file(s) rendered deterministically"
        return head + (f" — {self.down}" if self.down else
                       " — " + "; ".join(f"{p}: {w}" for p, w in list(self.fallbacks.items())[:3]))

    def fallback(self, path: str) -> str | None:
        """The deterministic rendering of the same input, for a file validation rejected."""
        alt = self._alt.get(path)
        if alt is None:
            return None
        kind, args = alt
        return self.det.page(*args) if kind == "page" else self.det.summary(*args)

    # -- calling the model
    def _ask(self, system: str, user: str) -> tuple[str, str] | None:
        """(cache key, answer), from the cache or the endpoint; None once it is down."""
        key = hashlib.sha256(f"{self.settings.model}\x00{system}\x00{user}".encode()).hexdigest()[:24]
        if key in self.cache:
            self.hits += 1
            return key, self.cache[key]
        if self.down:
            return None
        try:
            return key, self.client.complete(system, user)
        except LLMError as e:
            self.down = str(e)
            log.warning("dream: %s; rendering deterministically for the rest of this run", e)
            return None

    def _keep(self, key: str, answer: str) -> None:
        """Cache a usable answer (an unusable one is not kept: it is asked again next time)."""
        self.cache[key] = answer
        self.used.add(key)

    # -- the Synthesizer interface
    def page(self, spec: PageSpec) -> str:
        path = f"knowledge/{spec.slug}.md"
        self._alt[path] = ("page", (spec,))
        live = [c for c in spec.claims if c.section in LIVE_SECTIONS]
        if not live:
            return self.det.page(spec)
        refs, ev_lines, ev_text = _evidence(live)
        slugs = {s for s, _n in spec.related}
        user = (f"Subject: {spec.title} ({spec.type})\n"
                + ("Linkable pages: " + ", ".join(f"[[{s}]] {spec.titles.get(s, s)}" for s in sorted(slugs))
                   + "\n" if slugs else "")
                + "\nEvidence:\n" + "\n".join(ev_lines) + "\n")
        got = self._ask(PAGE_SYSTEM, user)
        if got is None:
            self.fallbacks[path] = "endpoint unavailable"
            return self.det.page(spec)
        parsed = parse_answer(got[1], len(refs.refs), slugs)
        if not parsed.usable:
            self.fallbacks[path] = "answer had no cited bullet"
            return self.det.page(spec)
        self._keep(*got)
        self._gists[spec.slug] = self._gist(parsed, ev_text)
        return self._render_page(spec, refs, parsed)

    def _render_page(self, spec: PageSpec, refs: _Refs, parsed: Parsed) -> str:
        lines = [f"# {spec.title}", "", intro(spec), ""]
        for section in FIXED_BEFORE:
            cs = [c for c in spec.claims if c.section == section]
            if cs:
                lines += ([] if section == "Now" else [f"## {section}", ""])
                lines += [claim_line(c, refs.cite) for c in cs] + [""]
        for section in LIVE_SECTIONS:
            bs = [b for s, b in parsed.bullets if s == section]
            if bs:
                lines += [f"## {section}", "", *bs, ""]
        for section in FIXED_SECTIONS:
            cs = [c for c in spec.claims if c.section == section]
            if not cs:
                continue
            lines += [f"## {section}", ""]
            lines += (thread_lines(cs, refs.cite) if section == "Threads"
                      else [*(claim_line(c, refs.cite) for c in cs), ""])
        return finish_page(spec, lines, refs.refs, self.name)

    def summary(self, session: str, date: str | None, title: str, participants: list[str],
                turns: int, claims: list[Claim]) -> str:
        path = f"sessions/{session}/summary.md"
        args = (session, date, title, participants, turns, claims)
        self._alt[path] = ("summary", args)
        if not claims:
            return self.det.summary(*args)
        refs, ev_lines, _t = _evidence(claims)
        user = (f"Session {session}" + (f" on {date}" if date else "")
                + f", participants: {', '.join(participants) or 'unknown'}.\n\nEvidence:\n"
                + "\n".join(ev_lines) + "\n")
        got = self._ask(SUMMARY_SYSTEM, user)
        if got is None:
            self.fallbacks[path] = "endpoint unavailable"
            return self.det.summary(*args)
        parsed = parse_answer(got[1], len(refs.refs), set(), sections=("Summary",))
        if not parsed.usable:
            self.fallbacks[path] = "answer had no cited bullet"
            return self.det.summary(*args)
        self._keep(*got)
        lines = [f"# Session {session}" + (f" — {date}" if date else ""), "",
                 f"Participants: {', '.join(participants) or 'unknown'}. {turns} turns.", "",
                 *(b for _s, b in parsed.bullets)]
        meta = {"session": session, "date": date or "", "title": title, "type": "summary",
                "participants": participants, "turns": turns, "sources": refs.refs,
                "generator": self.name}
        return frontmatter(meta) + "\n" + "\n".join(lines).rstrip() + "\n"

    def index_line(self, spec: PageSpec) -> str:
        """The deterministic line, with the model's first bullet as the gist when that
        bullet is clearly supported by its evidence: INDEX.md is not verified after
        rendering (it has no sources) and prefills every agent's prompt."""
        gist = self._gists.get(spec.slug)
        if spec.gist or not gist:
            return self.det.index_line(spec)  # a current line says more than an event
        return index_line(spec, gist)

    @staticmethod
    def _gist(parsed: Parsed, ev_text: dict[int, str]) -> str:
        for _s, b in parsed.bullets:
            m = re.search(r"\[cite:(\d+)\]", b)
            if not m or int(m.group(1)) not in ev_text:
                continue
            claim = re.sub(r"\s*\[cite:[^\]]*\]", "", b[2:]).replace("[[", "").replace("]]", "").strip()
            cw = set(content_words(claim))
            src = set(content_words(ev_text[int(m.group(1))]))
            if cw and len(cw & src) / len(cw) >= 0.8:
                return claim if len(claim) <= 90 else claim[:87].rsplit(" ", 1)[0] + "…"
        return ""


def synthesizer_from_config(cfg: Any, choice: str | None = None):
    """The synthesizer a command asked for: ``choice`` (the ``--synth`` flag) or
    ``cfg.dream_synthesizer``. ``llm`` needs a base URL and a model (clear error if not)."""
    from brainfs.backend.config import ConfigError

    which = (choice or getattr(cfg, "dream_synthesizer", "deterministic") or "deterministic").lower()
    if which == "deterministic":
        return DeterministicSynthesizer()
    if which != "llm":
        raise ConfigError(f"unknown synthesizer {which!r} (use llm or deterministic)")
    if not cfg.llm_base_url:
        raise ConfigError("the llm synthesizer needs an endpoint: set BRAINFS_LLM_BASE_URL or "
                          "OPENAI_BASE_URL (e.g. http://127.0.0.1:8000/v1)")
    if not cfg.llm_model:
        raise ConfigError("the llm synthesizer needs a model name: set BRAINFS_LLM_MODEL")
    return LLMSynthesizer(LLMSettings(cfg.llm_base_url, cfg.llm_model, cfg.llm_api_key,
                                      float(cfg.llm_timeout), int(cfg.llm_max_attempts)))

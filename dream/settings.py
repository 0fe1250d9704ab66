"""What a dream run is tuned by: :class:`Settings`, read once from the skill files'
frontmatter (``dream/skill.md``, then the corpus's ``.brainfs/dream-skill.md`` or
``DREAM.md``) and the caller's overrides. ``dream/skill.md`` says what each one does."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from importlib import resources
from typing import Any

from brainfs.cache.search.chunker import split_frontmatter


def default_skill() -> str:
    """The skill file dream ships with (its settings and standing instructions)."""
    return resources.files("brainfs.dream").joinpath("skill.md").read_text(encoding="utf-8")


def settings_from(*skills: str | None, overrides: dict | None = None) -> dict[str, Any]:
    """Settings from skill files' frontmatter (later ones win), then ``overrides``."""
    out: dict[str, Any] = {}
    for s in skills:
        if not s:
            continue
        meta, _b, _bad = split_frontmatter(s)
        for k, v in (meta or {}).items():
            if isinstance(v, (int, float, str, bool)):
                out[k] = v
    out.update(overrides or {})
    return out


@dataclass(frozen=True)
class Settings:
    """Every setting dream reads, with the default it has when no skill file sets it."""

    # which subjects get a page (subjects.py)
    min_mentions: int = 2
    min_sessions: int = 1
    max_pages: int = 2000
    # budgets of one run
    max_sessions_per_run: int = 1000
    time_budget_seconds: float = 600.0
    # one session (extract.py)
    extractor: str = "auto"
    summary_sentences: int = 5
    facts_per_speaker_per_session: int = 8
    # one page (pages.py, threads.py)
    max_facts_per_page: int = 200
    max_timeline: int | None = None     # None: max_facts_per_page
    max_page_chars: int = 64000
    user_page_lines: int = 150          # readable.bound_lines: the page every session feeds
    stale_after_days: int = 365
    thread_max_topics: int = 100
    thread_max_mentions: int = 8
    thread_window_words: int = 6
    thread_max_share: float = 0.05
    # knowledge/INDEX.md
    index_cap_tokens: int = 2000
    index_half_life_days: float = 120.0
    # verification (verify.py)
    similarity_threshold: float = 0.45
    lexical_threshold: float = 0.5

    @property
    def timeline_cap(self) -> int:
        """Timeline entries kept on one page."""
        return self.max_facts_per_page if self.max_timeline is None else self.max_timeline

    @classmethod
    def from_values(cls, values: dict[str, Any]) -> Settings:
        """The settings ``values`` names (as :func:`settings_from` reads them), each
        converted to its field's type; unknown keys are ignored."""
        kinds = {"int": int, "float": float, "str": str, "int | None": int}
        got: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            if f.name not in values:
                continue
            convert = kinds[str(f.type)]
            try:
                got[f.name] = convert(values[f.name])
            except (TypeError, ValueError):
                raise ValueError(f"dream setting {f.name}: {values[f.name]!r} is not "
                                 f"{'a number' if convert is not str else 'text'}") from None
        return cls(**got)

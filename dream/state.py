"""What dream remembers between runs: ``.brainfs/dream-state.json``, as a typed record.

The file is JSON (sorted keys, one-space indent) so that a person can read it and a rerun
over the same input writes the same bytes. Its records (a session's extraction, a card, a
page's hand edits) stay JSON objects: they are data, written and read by the module that
owns them (:mod:`.core`, :mod:`.corrections`, :mod:`.edits`).
"""

from __future__ import annotations

import copy
import json
import logging
from dataclasses import dataclass, field, fields
from typing import Any

from brainfs.backend.keys import DREAM_STATE_KEY

log = logging.getLogger(__name__)

STATE_PATH = DREAM_STATE_KEY
#: Another version in the file starts dream from scratch (every session read again).
STATE_VERSION = 2  # 2: sessions hold "cues" (type evidence of every sentence)


@dataclass
class DreamState:
    """One run's view of the state (see dream/README.md, *Orient*)."""

    version: int = STATE_VERSION
    #: session id → what was extracted from its transcript (etag, turns, summary, facts, …)
    sessions: dict[str, dict] = field(default_factory=dict)
    #: forget request path → its ETag, as last seen
    forget: dict[str, str] = field(default_factory=dict)
    #: correction event path → its ETag, once turned into a card
    corrections: dict[str, str] = field(default_factory=dict)
    #: card path → the correction card (text, scope, subjects, supersedes, …)
    cards: dict[str, dict] = field(default_factory=dict)
    #: page path → its hand edits (lines kept, claims deleted, page deleted)
    hand: dict[str, dict] = field(default_factory=dict)
    #: page path → what dream wrote in it, line by line (to tell a hand edit)
    written: dict[str, dict] = field(default_factory=dict)
    #: every file dream manages
    managed: list[str] = field(default_factory=list)
    #: every managed file that is not a page (INDEX.md, sessions/index.md, summaries, cards,
    #: the fact records) → the MD5 of what dream wrote in it: another writer's change (a
    #: mount, an import, an S3 client) is noticed by the next run, which writes it again
    #: (a page's change is a hand edit instead: ``written``)
    owned: dict[str, str] = field(default_factory=dict)
    #: the verification cache (claim and source hash → verdict)
    verified: dict[str, Any] = field(default_factory=dict)
    #: what the last run's verification of each file found, keyed by a hash of the file and
    #: of what its citations read (``core._verify_claims``): "files" (path → [hash, claims,
    #: rejected claims, rejected line numbers, {hash of a claim and its source: verdict}]),
    #: "aliases" (name → full name), "context" — an unchanged file with unchanged sources is
    #: not checked again, nor a changed file's claims whose sources did not change
    checked: dict[str, Any] = field(default_factory=dict)
    #: page slug → [hash of its facts' texts and speakers, the contradictions found among
    #: them] (``wiki.page_contradictions``): a page whose facts are the same is not read again
    contradicted: dict[str, list] = field(default_factory=dict)
    #: the relations read from each fact ("rules": the hash of the rules they are read by,
    #: ``wiki._RULE_MODULES``; "facts": hash of a fact's text → its relations;
    #: ``wiki._known_relations``)
    relations: dict[str, Any] = field(default_factory=dict)
    #: a model-backed synthesizer's answers by prompt hash; None for one that keeps none
    synth_cache: dict[str, str] | None = None
    skill_hash: str | None = None
    synthesizer: str | None = None
    extractor: str | None = None
    last_run: str | None = None
    #: keys this version does not know, kept as they were
    other: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_json(cls, raw: str | None) -> DreamState:
        """The state a file holds; a fresh one for no file, invalid JSON or another version."""
        if not raw:
            return cls()
        try:
            data = json.loads(raw)
        except ValueError:
            log.warning("%s is not valid JSON; starting from scratch", STATE_PATH)
            return cls()
        if not isinstance(data, dict) or data.get("version") != STATE_VERSION:
            return cls()
        known = {f.name for f in fields(cls)} - {"other"}
        out = cls(**{k: v for k, v in data.items() if k in known})
        out.other = {k: v for k, v in data.items() if k not in known}
        return out

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = dict(self.other)
        for f in fields(self):
            if f.name == "other":
                continue
            v = getattr(self, f.name)
            if f.name == "synth_cache" and v is None:
                continue  # a synthesizer that keeps no answers has no cache in the file
            if v is None and f.name not in ("skill_hash", "synthesizer", "extractor", "last_run"):
                continue
            out[f.name] = v
        return out

    def to_json(self) -> str:
        """The file's bytes (sorted keys: the same state gives the same file)."""
        return json.dumps(self.as_dict(), indent=1, sort_keys=True) + "\n"

    def copy(self) -> DreamState:
        """A deep copy (a run changes its own state, never the one it started from)."""
        return copy.deepcopy(self)

    def copy_of(self, raw: str | None) -> DreamState:
        """A deep copy of this state read from ``raw``, the file it was read from (parsing
        the JSON again is several times faster than :meth:`copy` on a large state)."""
        return DreamState.from_json(raw) if raw else self.copy()

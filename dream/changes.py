"""The run's last phase: what changed against the tree as listed (each change with its
reason), what the state records of it (the managed files and, per page, what dream wrote, to
tell a hand edit next run), and the run's result with its stats."""

from __future__ import annotations

import datetime as _dt
import time

from brainfs.cache.layout import CARDS_DIR, INDEX_PATH, SESSIONS, SESSIONS_INDEX
from brainfs.cache.search.chunker import split_frontmatter
from brainfs.cache.search.forget import norm

from . import edits
from .results import Change, RunResult
from .run import Run
from .state import STATE_PATH
from .text import md5_hex
from .wiki import forgotten_by


def diff_against_previous(run: Run) -> None:
    """The changes against the tree as listed, and what the state records of them: the
    managed files and, per page, what dream wrote (to tell a hand edit next run)."""
    files, listing, state, excluded = run.files, run.listing, run.state, run.excluded
    managed_prev = set(run.prev.managed)
    for p, how in run.overwritten.items():
        # first: why a file nothing else changed is written (a derived file is not kept as
        # edited; what it should say goes through a correction, a note or the page)
        run.reasons[p].insert(0, f"{how} outside dream since its last run; written again from the "
                                 "memory (to change what it says: `brainfs correct`, a note, or "
                                 "the subject's page)")
    for p in sorted(files):
        if p in excluded:
            continue
        if listing.get(p) == md5_hex(files[p]):
            continue
        old = run.tree.read(p) if p in listing else None
        run.previous[p] = old
        why = "; ".join(dict.fromkeys(run.reasons.get(p, []))) or _why(p, old, files[p], run.phrases)
        run.changes.append(Change(p, "modify" if old is not None else "add", why))
    for p in sorted(managed_prev - set(files)):
        if p in listing:
            run.previous[p] = run.tree.read(p)
            merged = p.startswith(CARDS_DIR) and run.reasons.get(p)  # a twin card (merge_twins)
            run.changes.append(Change(p, "delete", "; ".join(dict.fromkeys(merged)) if merged
                                      else _why_gone(run.previous[p], run.phrases)))
    state.managed = sorted((set(files) - excluded | (managed_prev & excluded)) - set(run.hand_events)
                           - set(run.external))
    state.owned = {p: md5_hex(files[p]) for p in state.managed if p in files and not edits.is_page(p)}
    # What dream wrote, line by line, so that the next run can tell a hand edit (edits.py).
    written = {}
    for p in sorted(state.managed):
        if not edits.is_page(p):
            continue
        if p in excluded:
            if p in run.prev.written:
                written[p] = run.prev.written[p]
            continue
        ids = {norm(edits.strip_cites(x.get("shown", x["text"]))): x["id"]
               for x in state.hand.get(p, {}).get("lines", [])}
        last = run.prev.written.get(p)
        if (not ids and last is not None and last["md5"] == listing.get(p) == md5_hex(files[p])
                and not any("hand" in e for e in last["lines"].values())):
            # the same text as the last run wrote, no hand line then or now: the same record
            written[p] = last
            continue
        written[p] = edits.written_record(files[p], ids)
    state.written = written


def finish(run: Run) -> RunResult:
    """The state's last fields, the stats, and the result."""
    state, info, verifier, synth = run.state, run.info, run.verifier, run.synth
    # The state names the synthesizer that actually rendered: a run that fell back from the
    # model differs from the configured name, so the next run renders again.
    state.synthesizer = synth.effective_name
    synth.prune_cache()
    state.last_run = (run.now or _dt.datetime.now(_dt.timezone.utc)).replace(microsecond=0).isoformat()
    stats = {
        "sessions_total": len(run.transcripts), "sessions_read": run.read,
        "sessions_deferred": len(run.deferred),
        "pages": info.pages, "facts": info.facts, "superseded": info.superseded,
        "contradictions": info.contradictions,
        "corrected": info.corrected, "forgotten": sum(info.forgotten.values()) + len(run.redacted),
        "redacted_files": len(run.redacted),
        "claims": verifier.stats.claims, "rejected": verifier.stats.rejected,
        "share_rejected": round(verifier.stats.share_rejected, 4),
        "verify_method": verifier.stats.method, "verify_model_calls": verifier.stats.embedded,
        "verify_files_reused": run.checked_reused, "verify_claims_reused": run.claims_reused,
        "citations": run.citations,
        "share_valid_citations": run.share_after, "share_valid_citations_before_validation": run.share_before,
        "problems": len(run.problems), "excluded": sorted(run.excluded),
        "seconds": round(time.monotonic() - run.t0, 3),
    }
    report = synth.report()
    if report is not None:
        stats["synth"] = report
        stats["synth_note"] = synth.note()
    out_files = dict(run.files)
    out_files[STATE_PATH] = state.to_json()
    changes = run.changes
    if STATE_PATH not in [c.path for c in changes]:
        changes.append(Change(STATE_PATH, "modify" if STATE_PATH in run.listing else "add", "dream state"))
        run.previous[STATE_PATH] = run.raw_state
    return RunResult(False, out_files, changes, state, run.problems, stats, run.previous, run.deferred)


def _why(path: str, old: str | None, new: str, phrases: list[tuple[str, str]]) -> str:
    """A readable reason for a change without a recorded one: what the sources did."""
    if path == INDEX_PATH:
        return "index of pages changed"
    if path == SESSIONS_INDEX:
        return "session list changed"
    om = (split_frontmatter(old)[0] or {}) if old else {}
    nm = split_frontmatter(new)[0] or {}
    os_, ns = set(om.get("sources") or []), set(nm.get("sources") or [])
    added, removed = ns - os_, os_ - ns
    parts = []
    if old is None:
        parts.append("new page")
    if added:
        sess = sorted({a.split("/")[1] for a in added if a.startswith(SESSIONS)})
        parts.append(f"+{len(added)} cited turn{'s' if len(added) != 1 else ''}"
                     + (f" from {', '.join(sess[:5])}" + ("…" if len(sess) > 5 else "") if sess else ""))
    if removed:
        parts.append(f"−{len(removed)} cited turn{'s' if len(removed) != 1 else ''}"
                     + (" (forget request)" if phrases else ""))
    return "; ".join(parts) or "rewritten"


def _why_gone(old: str | None, phrases: list[tuple[str, str]]) -> str:
    """A readable reason for a managed file that is gone."""
    if old and phrases:
        meta = split_frontmatter(old)[0] or {}
        title = str(meta.get("title") or "")
        req = forgotten_by(title, phrases)
        if req:
            return f"forgotten ({req})"
        return "no facts left after forget requests or below min_mentions"
    return "no longer has enough facts"


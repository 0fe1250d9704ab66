"""The run's checking phase: each claim of each page and summary against its source
(an unsupported one is dropped; a file whose text and sources are as the last run verified
gets that run's verdict, keyed by :class:`CheckKeys`), then validation, where an erroneous
file keeps its previous version (or the fallback rendering when it has none)."""

from __future__ import annotations

import json
import re

from brainfs.cache.layout import CARDS_DIR, TRANSCRIPT_RE, in_knowledge, is_page, slug_of

from .citedsources import CitedSources
from .run import Run
from .text import md5_hex
from .validate import CITE_ANY_RE, CorpusView, Problem, frontmatter_of, validate_tree
from .verify import FileVerdict, Verifier, drop_lines
from .wiki import forgotten_by


def _citation_share(files: dict[str, str], probs: list[Problem]) -> tuple[int, float]:
    """(citations, share valid) over the staged pages and summaries."""
    total = sum(len(CITE_ANY_RE.findall(txt)) for p, txt in files.items()
                if in_knowledge(p) or p.endswith("summary.md"))
    bad = sum(1 for pr in probs if pr.code in ("cite-syntax", "cite-unresolved",
                                               "source-missing", "source-turn"))
    return total, (round(1 - bad / total, 4) if total else 1.0)


def _checked(p: str) -> bool:
    """A file whose claims verification reads: a page (not INDEX.md) or a summary."""
    return is_page(p) or p.endswith("/summary.md")


def verify_and_validate(run: Run, embedder) -> None:
    """Each claim against its source (unsupported ones dropped); then validation, where an
    erroneous file keeps its previous version (or the fallback rendering when it has none)."""
    files, listing, state = run.files, run.listing, run.state
    sources = CitedSources(run)
    view = CorpusView(lambda p: p in listing or p in files,
                      lambda p: (set(sources.turns_of(p)) if sources.turns_of(p) is not None else None))
    cap_tokens = run.cfg.index_cap_tokens
    memo: dict = {}  # this run's validations of unchanged files (validate_tree)
    problems = validate_tree(files, view, cap_tokens, memo)
    # a session without a date is the transcript's problem (its summary is not written)
    problems += [Problem(run.transcripts[sid], "transcript-date",
                         "transcript frontmatter has no 'date' (ISO 8601, see cache/FORMAT.md): "
                         "not summarised; its facts are undated", "warning")
                 for sid in sorted(state.sessions)
                 if sid in run.transcripts and not state.sessions[sid].get("date")]
    run.citations, run.share_before = _citation_share(files, problems)
    run.verifier = _verify_claims(run, embedder, sources, problems)
    _exclude_errors(run, view, cap_tokens, problems, memo)
    # GUIDE.md and the user's cards are theirs, not dream's: changed, never managed
    files.update(run.external)
    # What is published: the share of valid citations after validation (must be 1.0).
    run.citations, run.share_after = _citation_share(
        files, [pr for pr in validate_tree(files, view, cap_tokens, memo) if pr.path not in run.excluded])
    # drop duplicate problems, keep order
    seen_pr: set = set()
    run.problems = [pr for pr in problems if not (str(pr) in seen_pr or seen_pr.add(str(pr)))]


#: Part of every verification record's key: another value checks every file again (bump it
#: when what verification reads from a source changes: ``CitedSources``, ``verify.py``).
CHECK_VERSION = "check-v2"


def _verify_claims(run: Run, embedder, sources: CitedSources, problems: list[Problem]) -> Verifier:
    """Each claim of each page and summary against its source; an unsupported one is
    dropped from the file and reported. A file whose text and cited sources are what the
    last run verified gets that run's verdict again (``state.checked``) instead of each
    claim checked anew: the same claims against the same source texts, so the same result."""
    files, info, prog = run.files, run.info, run.prog
    verifier = Verifier(embedder, run.cfg.similarity_threshold,
                        run.cfg.lexical_threshold, cache=run.state.verified)
    prog.done(f"{info.pages} pages from {info.facts} facts")
    prog.phase("verifying claims", total=len([p for p in files if _checked(p)]))
    keys = CheckKeys(run, sources, verifier)
    for p in sorted(files):
        if _checked(p):
            prog.step()
            key = keys.key(p, files[p])
            old = keys.previous.get(p)
            if old is not None and old[0] == key and not keys.alias_changed(files[p]):
                verdict = FileVerdict(old[1], old[2], list(old[3]))
                verifier.stats.claims += verdict.claims
                verifier.stats.rejected += verdict.rejected
                keys.reused += 1
                keys.records[p] = old
            else:
                # a changed file: each claim whose (claim, source) the last run judged is not
                # judged again (the user's page changes with every session, most of it not)
                keys.current = {}
                verdict = verifier.check_file(p, files[p], sources.text, known=keys.known,
                                              found=keys.found)
                keys.records[p] = [key, verdict.claims, verdict.rejected, verdict.bad_lines,
                                   keys.current]
            alt = run.synth.checked(p, files[p], verdict.bad_lines)
            if alt is not None:
                # a model's page with a rejected sentence falls back whole: the deterministic
                # rendering of the same facts, verified in its turn
                for ln in drop_lines(files[p], verdict.bad_lines)[1]:
                    problems.append(Problem(p, "unsupported-claim", "the model's sentence is not "
                                            f"supported by its source: {ln.strip()[:100]!r}", "warning"))
                problems.append(Problem(p, "synth-fallback", "a sentence failed verification: the "
                                        "deterministic rendering is published", "warning"))
                files[p] = alt
                verdict = verifier.check_file(p, alt, sources.text)
            new_text, rejected = drop_lines(files[p], verdict.bad_lines)
            if rejected:
                files[p] = new_text
                for ln in rejected:
                    problems.append(Problem(p, "unsupported-claim",
                                            f"dropped, not supported by its source: {ln.strip()[:100]!r}",
                                            "warning"))
    run.state.checked = keys.as_state()
    prog.done(f"files, {verifier.stats.claims} claims, {verifier.stats.rejected} rejected"
              + (f" ({keys.reused} files as last run)" if keys.reused else ""))
    run.checked_reused = keys.reused
    run.claims_reused = keys.claims_reused
    return verifier


class CheckKeys:
    """The key of one file's verification: a hash of its text and of what each of its
    sources reads — a transcript's ETag (its turns and date), a hand line's text, a card's
    text and the user's name — within a context (the verifier's method and thresholds, the
    role speakers' names). The aliases a turn's source text adds ("Mara = Mara Lind") are
    the rest: a file citing a turn that contains an alias added, dropped or renamed since
    the last run is checked again."""

    def __init__(self, run: Run, sources: CitedSources, verifier: Verifier) -> None:
        self.run, self.sources = run, sources
        subs, renamed = run.info.subjects, run.info.renamed
        roles = sorted((spk, name, subs.by_slug[w].title if (w := subs.slug_for(name)) in subs.by_slug else "")
                       for spk, name in renamed.items())
        self.context = md5_hex(json.dumps([CHECK_VERSION, verifier.stats.method, verifier.sim,
                                             verifier.lex, roles]))
        last = run.state.checked or {}
        same = last.get("context") == self.context
        self.previous: dict[str, list] = (last.get("files") or {}) if same else {}
        old_aliases: dict[str, str] = (last.get("aliases") or {}) if same else {}
        self.aliases = dict(sorted(sources.aliases.items()))
        self.changed = sorted(a for a in set(self.aliases) | set(old_aliases)
                              if self.aliases.get(a) != old_aliases.get(a))
        self.records: dict[str, list] = {}
        self.reused = 0
        #: (claim, source) key → verdict, of every file the last run judged
        self.verdicts: dict[str, bool] = {}
        for rec in self.previous.values():
            if len(rec) > 4:
                self.verdicts.update(rec[4])
        self.current: dict[str, bool] = {}   # the file being checked: its verdicts
        self.claims_reused = 0
        self._refs: dict[str, tuple[str, bool]] = {}

    def key(self, path: str, text: str) -> str:
        meta, _body, bad = frontmatter_of(text)
        refs = (meta.get("sources") or []) if meta and not bad else []
        parts = [text]
        for ref in refs:
            parts.append(f"{ref}\x00{self._reads(ref)}")
        return md5_hex("\x01".join(parts))

    def _reads(self, ref: object) -> str:
        """What verification's source text for ``ref`` depends on (see the class)."""
        if not isinstance(ref, str):
            return ""
        run = self.run
        path, _, anchor = ref.partition("#")
        if anchor.startswith("hand-"):
            line = next((x["text"] for x in run.state.hand.get(path, {}).get("lines", [])
                         if x["id"] == anchor[5:]), None)
            return "hand:" + ("" if line is None else line)
        if TRANSCRIPT_RE.match(path):
            return "turn:" + (run.listing.get(path) or "")
        # a card's source text names the user (verification reads it as their statement)
        who = f"by:{self.sources.user_title}:" if path.startswith(CARDS_DIR) else ""
        txt = run.files.get(path)
        if txt:
            return who + "file:" + md5_hex(txt)
        return who + "tree:" + (run.listing.get(path) or "")

    def _claim_key(self, claim: str, ref: str) -> tuple[str, bool]:
        """(the key of ``claim`` against ``ref``'s source, whether an alias the cited turn
        names changed since the last run)."""
        got = self._refs.get(ref)
        if got is None:
            dirty = False
            path, _, anchor = ref.partition("#")
            if self.changed and TRANSCRIPT_RE.match(path):
                turn = (self.sources.turns_of(path) or {}).get(anchor)
                dirty = turn is not None and any(a in turn for a in self.changed)
            got = self._refs[ref] = (f"{ref}\x00{self._reads(ref)}", dirty)
        return md5_hex(claim + "\x00" + got[0])[:20], got[1]

    def known(self, claim: str, ref: str) -> bool | None:
        """The last run's verdict on ``claim`` against the same source text, if any."""
        key, dirty = self._claim_key(claim, ref)
        got = None if dirty else self.verdicts.get(key)
        self.claims_reused += got is not None
        return got

    def found(self, claim: str, ref: str, ok: bool) -> None:
        self.current[self._claim_key(claim, ref)[0]] = ok

    def alias_changed(self, text: str) -> bool:
        """Whether a turn ``text`` cites names an alias added, dropped or renamed since the
        last run (its source text then reads differently: the file is checked again)."""
        if not self.changed:
            return False
        meta, _body, bad = frontmatter_of(text)
        for ref in (meta.get("sources") or []) if meta and not bad else []:
            path, _, anchor = str(ref).partition("#")
            if TRANSCRIPT_RE.match(path):
                turn = (self.sources.turns_of(path) or {}).get(anchor)
                if turn is not None and any(a in turn for a in self.changed):
                    return True
        return False

    def as_state(self) -> dict:
        return {"context": self.context, "aliases": self.aliases, "files": self.records}


def _exclude_errors(run: Run, view: CorpusView, cap_tokens: int, problems: list[Problem],
                    memo: dict | None = None) -> None:
    """Errors exclude a file (its previous version stays, or the fallback rendering when
    there is none); repeated, since an exclusion can break links."""
    files, listing, excluded = run.files, run.listing, run.excluded
    for _round in range(3):
        errs = [pr for pr in validate_tree(files, view, cap_tokens, memo) if pr.severity == "error"]
        bad = {pr.path for pr in errs} - excluded
        if not bad:
            break
        problems += [pr for pr in errs if pr.path in bad]
        for p in bad:
            old = run.tree.read(p) if p in listing else None
            alt = run.synth.fallback(p) if _round == 0 else None
            if alt is not None and (old is None or forgotten_by(old, run.phrases)):
                # No previous version to keep (or it holds what a forget request removed):
                # the deterministic rendering of the same facts, itself validated next round.
                files[p] = alt
                problems.append(Problem(p, "synth-fallback", "rejected rendering replaced by the "
                                        "deterministic one", "warning"))
                continue
            excluded.add(p)
            if old is None:
                title = re.search(r"^title:\s*['\"]?(.*?)['\"]?\s*$", files.pop(p), re.M)
                _unlink_page(files, p, title.group(1) if title else None)
            else:
                files[p] = old


def _unlink_page(files: dict[str, str], page: str, title: str | None) -> None:
    """A page dropped for its own error takes its links along, not the pages that hold
    them: ``[[slug]]`` becomes plain text in every other staged file (one page past a
    parser's limit once took 1,993 pages that linked to it down with it)."""
    if not (in_knowledge(page) and page.endswith(".md")):
        return
    slug = slug_of(page)
    pat = re.compile(r"\[\[" + re.escape(slug) + r"(?:#[^\]|]*)?(?:\|([^\]]*))?\]\]")
    for p, text in files.items():
        if "[[" + slug in text:
            files[p] = pat.sub(lambda m: m.group(1) or title or slug, text)


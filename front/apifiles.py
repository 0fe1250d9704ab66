"""Files through the Python API: the ``read``, ``list``, ``write``, ``append`` and ``note`` of
:class:`~brainfs.front.api.Memory`, and what records a change for dream to make —
``correct``, ``forget`` — or brings sessions in (``import_sessions``). A write never guts
a page dream wrote (:func:`replaces_dream_page`)."""

from __future__ import annotations

import datetime as _dt
import hashlib
import os
import re
from pathlib import Path
from typing import Any

from brainfs.backend.errors import NoSuchKey, PreconditionFailed
from brainfs.backend.keys import DIR_MARKER, is_link, link_name
from brainfs.cache.layout import is_page
from brainfs.front.apicore import PRIVATE_FOLDERS, MemoryCore
from brainfs.front.usage import UsageError

# Imports of the search stack, python-frontmatter (with yaml), dream and the session
# importers are made inside the methods that use them: `brainfs status` loads this module
# (with front/api.py) and starts without them (tests/front/test_cli_start.py).


def is_wiki_page(path: str) -> bool:
    """Whether ``path`` is a page of the wiki (INDEX.md is not: dream owns it whole)."""
    return is_page(path)


def replaces_dream_page(path: str, text: str, current: str | None) -> str | None:
    """Why writing ``text`` over ``current`` at ``path`` would gut a page dream wrote (a
    phrase for an error), or None. Dream keeps a page's hand edits and takes a claim gone
    from it as deleted for good (dream/edits.py), so a replacement that is not an edited
    copy of the page would silently retire every claim it held. An edited copy keeps dream's
    frontmatter (its ``generator``) or at least one of its cited lines; "oops", or "---" over
    "oops", is neither."""
    if current is None or not is_wiki_page(path):
        return None
    from brainfs.cache.search.chunker import split_frontmatter

    meta = split_frontmatter(current)[0] or {}
    if not meta.get("generator"):
        return None  # a page a person wrote: theirs to replace
    cited = [ln.strip() for ln in current.splitlines() if "[cite:" in ln]
    new_meta = split_frontmatter(text)[0] if text.lstrip().startswith("---") else None
    if (isinstance(new_meta, dict) and new_meta.get("generator")) or any(
            ln in text for ln in cited):
        return None  # an edited copy: dream sees the lines taken out as deleted by hand
    claims = len(cited)
    return (f"a page dream writes, and this text would replace it whole: dream keeps a page's "
            f"hand edits, so its {claims} cited line{'s' if claims != 1 else ''} would be taken "
            "as deleted by hand and not written again")


class MemoryFiles(MemoryCore):
    """:meth:`read`, :meth:`list`, :meth:`write`, :meth:`append`, :meth:`note`,
    :meth:`correct`, :meth:`forget` and :meth:`import_sessions` of a
    :class:`~brainfs.front.api.Memory`."""

    def read(self, path: str) -> str:
        """A file's text (through a mount: fetched on the spot when not local yet)."""
        p = self.check_path(path)
        if self.mountpoint is not None:
            f = self.mountpoint / p
            try:
                return f.read_bytes().decode("utf-8", errors="replace")
            except IsADirectoryError:
                raise UsageError(f"{p} is a folder: list it instead") from None
            except FileNotFoundError:
                raise UsageError(f"{p}: no such file in {self.url}") from None
            except OSError as e:
                raise UsageError(f"{p}: {e.strerror or e}") from None
        try:
            data, _etag = self.store.get(p)
        except NoSuchKey:
            raise UsageError(f"{p}: no such file in {self.url}") from None
        return data.decode("utf-8", errors="replace")

    def list(self, folder: str = "") -> list[str]:
        """Every file of the corpus under ``folder`` (recursive, sorted), local or not: what
        ``brainfs ls`` prints (a mount's own ``ls`` shows only its working set)."""
        under = self.check_path(folder) if folder.strip().strip("/") else ""
        # Directory markers are not files; a symbolic link is listed by its own name.
        out = sorted(link_name(o.path) if is_link(o.path) else o.path
                     for o in self.store.list(under)
                     if o.path.split("/")[0] not in PRIVATE_FOLDERS
                     and o.path.rsplit("/", 1)[-1] != DIR_MARKER)
        if under:
            out = [p for p in out if p.startswith(under + "/")]
            if not out:
                raise UsageError(f"{under}: no such folder in {self.url}")
        return out

    def write(self, path: str, text: str) -> str:
        """Create or replace a file; returns its path. Through a mount the write is durable
        when this returns (close(2) commits); in the bucket it is one PUT."""
        p = self.check_path(path, writing=True)
        data = text.encode("utf-8")
        gutted = replaces_dream_page(p, text, self._current_page(p))
        if gutted:
            raise UsageError(f"{p}: {gutted}; to add to it, append a line (append); to change "
                             "what it says, record a correction (`brainfs correct \"...\"`, the "
                             "correct tool) or write the page back with its frontmatter and the "
                             "lines to keep")
        if self.mountpoint is not None:
            f = self.mountpoint / p
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_bytes(data)
            return p
        with self._lock:
            self.store.put(p, data)
        return p

    def append(self, path: str, text: str) -> str:
        """Add ``text`` at the end of a file (created when missing); returns its path.
        Through a mount O_APPEND is atomic; in the bucket the write is conditional on the
        version read (another writer in between: read again and retry, up to 5 times)."""
        p = self.check_path(path, writing=True)
        data = text.encode("utf-8")
        if self.mountpoint is not None:
            f = self.mountpoint / p
            f.parent.mkdir(parents=True, exist_ok=True)
            with open(f, "ab") as fh:
                fh.write(data)
            return p
        with self._lock:
            for _attempt in range(5):
                try:
                    # Read inside the section: where the server ignores conditions, the
                    # section's lock is what keeps another mount's write out in between.
                    with self.store.cas_section(p):
                        try:
                            old, etag = self.store.get(p)
                        except NoSuchKey:
                            old, etag = b"", None
                        if etag is None:
                            self.store.put(p, data, if_none_match=True)
                        else:
                            self.store.put(p, old + data, if_match=etag)
                    return p
                except PreconditionFailed:
                    continue
        raise UsageError(f"{p}: another writer kept changing it; nothing appended, try again")

    def note(self, text: str, topic: str = "agent", title: str | None = None,
             note_type: str = "fact") -> str:
        """A new memory card ``notes/<topic>/<date>-<slug>.md`` (frontmatter: type, created,
        updated, source); returns its path. Dream and the index read it like any card."""
        import frontmatter

        body = text.strip()
        if not body:
            raise UsageError("empty note")
        slug_src = title or body
        slug = "-".join(re.findall(r"[a-z0-9]+", slug_src.lower())[:8]) or "note"
        topic_p = self.check_path(topic, writing=True)
        now = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0)
        path = f"notes/{topic_p}/{now:%Y-%m-%d}-{slug}.md"
        meta: dict[str, Any] = {"type": note_type, "created": now.date().isoformat(),
                                "updated": now.date().isoformat(), "source": "brainfs api"}
        if title:
            meta["title"] = title
        content = frontmatter.dumps(frontmatter.Post(body, **meta), sort_keys=False) + "\n"
        n = 2
        while self._exists(path):
            path = f"notes/{topic_p}/{now:%Y-%m-%d}-{slug}-{n}.md"
            n += 1
        return self.write(path, content)

    def _current_page(self, p: str) -> str | None:
        """The text at ``p`` when it is a wiki page that exists (what a write would
        replace), else None; other paths cost no read."""
        if not is_wiki_page(p):
            return None
        try:
            if self.mountpoint is not None:
                return (self.mountpoint / p).read_bytes().decode("utf-8", errors="replace")
            return self.store.get(p)[0].decode("utf-8", errors="replace")
        except (OSError, NoSuchKey):
            return None

    def _exists(self, p: str) -> bool:
        if self.mountpoint is not None:
            return (self.mountpoint / p).exists()
        try:
            self.store.head(p)
            return True
        except NoSuchKey:
            return False

    def correct(self, text: str, scope: str = "global") -> str:
        """Record a correction; the next dream run turns it into a card and updates the
        pages, the user's older card and GUIDE.md. Returns the event's path."""
        from brainfs.dream.core import correction_event

        if not text.strip():
            raise UsageError("empty correction")
        path, content = correction_event(text, scope=scope)
        if self.mountpoint is not None:
            return self.write(path, content)
        self.store.put(path, content.encode("utf-8"), if_none_match=True)
        return path

    def forget(self, phrase: str) -> str:
        """Ask to forget a phrase (``forget/<stamp>.md``): the index drops chunks holding it
        at its next build, dream removes it from the wiki and redacts the transcripts.
        Returns the request's path."""
        import frontmatter

        from brainfs.cache.search.forget import FORGET_DIR, norm

        if not norm(phrase):
            raise UsageError("empty phrase: give the words to forget, e.g. \"Ana's phone number\"")
        now = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0)
        path = f"{FORGET_DIR}{now:%Y%m%dT%H%M%SZ}-{hashlib.md5(phrase.encode()).hexdigest()[:8]}.md"
        post = frontmatter.Post(" ".join(phrase.split()), created=now.isoformat().replace("+00:00", "Z"))
        content = frontmatter.dumps(post) + "\n"
        if self.mountpoint is not None:
            return self.write(path, content)
        self.store.put(path, content.encode("utf-8"), if_none_match=True)
        return path

    # ------------------------------------------------------------------ bulk work
    def import_sessions(self, src: str | os.PathLike[str], format: str = "auto",
                        speakers: dict[str, str] | None = None, date: str | None = None) -> Any:
        """Import sessions people already have (Claude Code logs, a ChatGPT or Claude.ai
        export, messages JSON, ``Speaker:`` text) as transcripts, as ``brainfs
        import-sessions`` does; ``speakers`` as its ``--speaker`` (``{"User": "Nadia"}``),
        ``date`` as its ``--date``. Returns the report (``.line(url)``, ``.notes()``: each
        new session's date and where it came from, a ``User`` kept as written; ``.paths``
        written, ``.warnings``). Idempotent. A bad file raises :class:`UsageError` before anything
        is written."""
        # the importers compile their date patterns on load (25 ms), the session file
        # pulls in the search stack
        from brainfs.cache.local.pack import build_pack
        from brainfs.cache.sessions.conversation import ImportInputError
        from brainfs.cache.sessions.options import make_options
        from brainfs.cache.sessions.sessionfile import import_sessions

        try:
            options = make_options(self.cfg.sessions.import_speakers,
                                   [f"{k}={v}" for k, v in (speakers or {}).items()], date)
            rep = import_sessions(Path(src), self.store, format, None, self.cfg.s3.max_workers, options)
        except ImportInputError as e:
            raise UsageError(f"{e}; nothing imported") from None
        if rep.paths:
            build_pack(self.store, self.cfg)  # the newest transcripts are in the preload pack
        return rep

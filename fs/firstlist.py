"""The first real LIST of a mount started from the listing snapshot, taken from the moment
the snapshot is read (before the mount answers) and handed over a key range at a time.

A packed file is never served on the snapshot's word alone (fs/SEMANTICS.md): the range of
the LIST that holds its key must vouch for its ETag first. The ranges holding the files a
mount's first reads want (the preload plan's order: GUIDE.md, the wiki's index, the newest
sessions) are asked for first, and each is handed to the mount as soon as it is in, so such
a read waits for one range, not for the whole listing.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterable

import trio

from brainfs.backend.store import ObjectInfo, ObjectStore


class FirstListing:
    """The LIST, in a thread of its own; :meth:`next` hands over what came in."""

    def __init__(self, store: ObjectStore, hints: Iterable[str], first: Iterable[str]) -> None:
        #: when the LIST began (monotonic): uploads applied after it are newer than it
        self.started = time.monotonic()
        self._q: queue.SimpleQueue[tuple[str, object]] = queue.SimpleQueue()
        # Daemonic: a mount that fails to start must not wait for its LIST to end.
        self._thread = threading.Thread(target=self._run, args=(store, list(hints), list(first)),
                                        name="first-list", daemon=True)
        self._thread.start()

    def _run(self, store: ObjectStore, hints: list[str], first: list[str]) -> None:
        try:
            objs = list(store.list(hints=hints, first=first,
                                   on_range=lambda part: self._q.put(("range", part))))
        except Exception as e:  # noqa: BLE001 - handed to the mount, which logs it
            self._q.put(("error", e))
        else:
            self._q.put(("done", objs))

    async def next(self) -> tuple[str, list[ObjectInfo]]:
        """The next thing in: ``("range", objects of one key range)``, any number of them
        (none when the LIST is taken in one pass), then ``("done", every object)``; raises
        the LIST's error instead of ``done``."""
        kind, payload = await trio.to_thread.run_sync(self._q.get, abandon_on_cancel=True)
        if kind == "error":
            assert isinstance(payload, BaseException)
            raise payload
        return kind, payload  # type: ignore[return-value]

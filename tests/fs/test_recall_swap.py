"""A recall that runs while the mount swaps in a new search index (issue 27): it answers
from the old parts or the new ones, never with ``apsw.ConnectionClosedError``.

The mount's recall service (fs/recall.py) over a real working set, a real index built in a
real S3 bucket (``rclone serve s3``) and the real index classes; no FUSE session. The order
of query and swap is forced through the service's own limiter (the one each query and the
old swap waited on), so what the test checks never depends on timing:

- ``before the search``: the swap is queued before the query's search;
- ``between search and vetting``: the query has searched, and the swap is queued before the
  query reads the index's file list to vet its answer (the trace of the issue:
  ``recall._indexed``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import trio

from brainfs.backend.keys import CorpusURL
from brainfs.backend.store import ObjectStore
from brainfs.cache.local.workingset import WorkingSet
from brainfs.cache.search.localindex import (LocalIndex, LocalIndexClosed, build_index,
                                             download_all, local_index_path)
from brainfs.fs.daemonopen import DaemonOpenOps
from brainfs.fs.recall import RecallService

from helpers import upload_tree, write_tree

pytestmark = [pytest.mark.unit, pytest.mark.s3]

TREE = {
    "notes/pets/okapi.md": "---\ntype: card\n---\nThe okapi mascot is called Ferdinand.\n",
    "notes/pets/heron.md": "---\ntype: card\n---\nThe heron visits the pond on Mondays.\n",
    "sessions/2026-01-10-budget/transcript.md":
        "---\nsession: 2026-01-10-budget\ndate: 2026-01-10T10:00:00\nparticipants: [Nadia]\n---\n"
        "[D1:1] Nadia: The okapi mascot budget is due on Friday.\n",
}


async def _until(pred) -> None:
    """Yield to the other tasks until ``pred()`` holds (a condition, never a duration)."""
    while not pred():
        await trio.sleep(0.01)


def _service(store: ObjectStore, corpus: CorpusURL, cfg, tmp_path: Path) -> RecallService:
    upload_tree(store, write_tree(tmp_path / "src", TREE))
    build_index(store, tmp_path / "build", None)
    cache = cfg.cache_dir
    ws = WorkingSet(cache, store, cfg)
    ws.sync_listing(store.list())
    svc = RecallService(store, cfg, cache, corpus)
    svc.attach(DaemonOpenOps(ws, cfg))
    local = local_index_path(cache)
    svc.local_index = LocalIndex(local, cfg, index=download_all(store, local))
    svc.ready.set()
    return svc


@pytest.mark.parametrize("order", ["before the search", "between search and vetting"])
def test_a_recall_during_an_index_swap_answers(order, store, corpus, cfg, tmp_path) -> None:
    cfg = cfg.override(embedder="none", recall_warmup=False)
    svc = _service(store, corpus, cfg, tmp_path)
    first = svc.local_index
    out: dict[str, object] = {}

    async def query() -> None:
        out["answer"] = json.loads(await svc.query("okapi mascot.json"))

    async def reload() -> None:
        await svc.reload()
        out["reloaded"] = True

    def waiting() -> int:
        return svc.limiter.statistics().tasks_waiting

    async def main() -> None:
        async with trio.open_nursery() as n:
            await svc.limiter.acquire()  # the test holds the queries' turn
            if order == "before the search":
                n.start_soon(reload)
                # The swap is queued (or done, where it waits for no query).
                await _until(lambda: waiting() == 1 or "reloaded" in out)
                n.start_soon(query)
                await _until(lambda: waiting() == 2 or ("reloaded" in out and waiting() == 1))
            else:
                n.start_soon(query)
                await _until(lambda: waiting() == 1)  # the query waits for its search
                n.start_soon(reload)
                await _until(lambda: waiting() == 2 or "reloaded" in out)
            svc.limiter.release()

    trio.run(main)
    answer = out["answer"]
    assert "error" not in answer, answer
    assert "notes/pets/okapi.md" in {c["path"] for c in answer["cards"]}, answer
    # The new index is the one searched from now on; the old one is closed once no query
    # holds it.
    assert svc.local_index is not first and out.get("reloaded")
    with pytest.raises(LocalIndexClosed):
        with first.hold():
            pass
    again = json.loads(trio.run(svc.query, "heron pond.json"))
    assert "notes/pets/heron.md" in {c["path"] for c in again["cards"]}, again
    svc.close()


def test_close_waits_for_the_last_holder(store, corpus, cfg, tmp_path) -> None:
    """Unit level: a local index closed while held keeps answering its holder, in another
    thread too, and closes its index when the holder lets go."""
    cfg = cfg.override(embedder="none", recall_warmup=False)
    svc = _service(store, corpus, cfg, tmp_path)
    r = svc.local_index
    assert r is not None
    with r.hold():
        r.close()
        got = trio.run(trio.to_thread.run_sync, r.search, "heron pond")
        assert "notes/pets/heron.md" in {c.path for c in got.cards}
        assert r.index.file_hashes()
    with pytest.raises(LocalIndexClosed):
        with r.hold():
            pass
    import apsw

    with pytest.raises(apsw.ConnectionClosedError):
        r.index.file_hashes()


def test_a_part_replaced_under_a_query_stays_open_until_the_index_closes(store, corpus, cfg, tmp_path) -> None:
    """Unit level: ``ShardedIndex.add`` of a part of the same name while a query holds the
    old one in its snapshot; the old one is closed with the index, not under the query."""
    import apsw

    from brainfs.cache.search import shardsync
    from brainfs.cache.search.sharded import ShardedIndex

    cfg = cfg.override(embedder="none", recall_warmup=False)
    svc = _service(store, corpus, cfg, tmp_path)
    ix = svc.local_index.index
    assert isinstance(ix, ShardedIndex)
    name = next(n for n in ix.names() if "notes/pets/okapi.md" in ix.part(n).file_hashes())
    held = ix.part(name)  # what a query's snapshot holds
    ix.add(name, shardsync.open_part(local_index_path(cfg.cache_dir), name))
    assert ix.part(name) is not held
    assert "notes/pets/okapi.md" in held.file_hashes()  # the query reads on
    svc.close()
    with pytest.raises(apsw.ConnectionClosedError):
        held.file_hashes()

"""The head of the thread lane: the summary of the past session the task continues, when
recall points to one that is about the task."""

from __future__ import annotations

import re

from brainfs.cache.layout import summary_path

from .builder import _Builder, _body
from .claims import words
from .sources import MemorySource
from .window import ContextItem


#: Sessions whose recalled passages' scores sum to at least this share of the best
#: session's sum are "most related" to the task by recall.
THREAD_RELATED = 0.8


def _thread_summary(b: _Builder, source: MemorySource, hits: list[ContextItem],
                    sess_index: list[tuple[str, str, str]]) -> None:
    """The summary of the session the task continues, at the head of the thread lane.

    The sessions most related to the task are those whose recalled passages' scores sum
    to within ``THREAD_RELATED`` of the best session's sum (recall's evidence for the
    session: one strong turn of a session about something else weighs less than the many
    turns of the session the task continues). A recalled passage can come from a
    session about something else (a turn that names the task's funder in passing), so a
    session counts only when it is itself about the task: its name (id and title) shares a
    word with the task, or its summary at least half of the task's words (a summary names
    much in passing; a name is the topic). Of those, the newest with a summary is taken
    (recent first: the thread's latest state). None of them, no summary: the newest
    session whatever the task, or one met only in passing, would be noise — and when the
    session the task continues has no summary, its own passages lead the lane."""
    best: dict[str, float] = {}
    n_hits: dict[str, int] = {}
    for it in hits:
        parts = it.path.split("/")
        if it.status == "skipped" or it.weak or len(parts) < 3 or it.score is None:
            continue
        best[parts[1]] = best.get(parts[1], 0.0) + it.score
        n_hits[parts[1]] = n_hits.get(parts[1], 0) + 1
    want = words(b.task)
    if not best or not want:
        return
    top = max(best.values())
    dates = {sid: (date, title) for sid, date, title in sess_index}
    by_score = [sid for sid, sc in best.items() if sc >= THREAD_RELATED * top]
    newest_first = sorted(by_score, key=lambda x: (dates.get(x, ("", ""))[0], best[x], x), reverse=True)
    for sid in newest_first:
        date, title = dates.get(sid, ("", ""))
        named = want & words(f"{sid.replace('-', ' ')} {title}")
        sp = summary_path(sid)
        stext = source.read(sp)
        summed = want & words(_body(stext)[1]) if stext else set()
        if not named and 2 * len(summed) < len(want):
            continue  # met in passing: not the thread the task continues
        common = named | summed
        if not stext:
            return  # the newest session about the task has no summary: its passages lead
        said = f" ({date[:10]}, \"{title}\")" if date else ""
        n, m = n_hits[sid], len(by_score)
        b.add_file("thread", sp, stext,
                   f"thread: summary of the session the task continues{said}: the newest of the "
                   f"{m} session{'s' if m != 1 else ''} most related to the task by recall that is "
                   f"about it (its name or summary shares {', '.join(_task_words(b.task, common))}"
                   f"); {n} recalled passage{'s' if n != 1 else ''} of it")
        return


def _task_words(task: str, stems: set[str]) -> list[str]:
    """The task's own words whose stems (:func:`claims.words`) are in ``stems``, in order."""
    return list(dict.fromkeys(w for w in re.findall(r"[^\W_]+", task.lower()) if words(w) & stems))

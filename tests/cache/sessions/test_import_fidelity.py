"""What an import keeps of its source, through ``brainfs import-sessions`` as a user runs it.

Against the test S3 server: a plain transcript's own date (or ``--date``), each turn's time
(Claude Code ``timestamp``, ChatGPT ``create_time``) kept in ``turn_times`` and used by the
index's reader and recall, ``--speaker User=Nadia`` (and the ``import_speakers`` setting), a
Claude Code log whose last line is garbage, a Claude.ai export, a truncated ChatGPT export,
and ``sessions/index.md`` listing the new sessions at once.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from brainfs.backend.config import Config
from brainfs.backend.keys import CorpusURL
from brainfs.backend.store import ObjectStore
from brainfs.cache.search.chunker import chunk_file, split_frontmatter
from brainfs.cache.search.index import SearchIndex
from brainfs.cache.search.retrieval import retrieve

PLAIN = """# Planning call, 3 November 2026

User: Can we move the caption study review to Thursday?
Assistant: Yes, Thursday at 11:00 works for everyone.
User: Good, book the small room.
"""

CC = [
    {"type": "user", "sessionId": "s-1", "uuid": "u1", "timestamp": "2026-10-05T08:00:00.000Z",
     "message": {"role": "user", "content": "The ferry to Awaji leaves at nine; remind me to pack the tripod."}},
    {"type": "assistant", "sessionId": "s-1", "uuid": "u2", "timestamp": "2026-10-05T08:00:04.000Z",
     "message": {"role": "assistant", "id": "m1", "content": [{"type": "text", "text": "Noted."}]}},
    {"type": "user", "sessionId": "s-1", "uuid": "u3", "timestamp": "2026-10-05T13:30:00.000Z",
     "message": {"role": "user", "content": "Back from Awaji: the tripod leg snapped on the pier."}},
]

CHATGPT = [{
    "id": "c-1", "title": "Bread", "create_time": 1790000000.0, "current_node": "n3",
    "mapping": {
        "n1": {"id": "n1", "parent": None, "children": ["n2"], "message": None},
        "n2": {"id": "n2", "parent": "n1", "children": ["n3"], "message": {
            "id": "n2", "author": {"role": "user"}, "create_time": 1790000100.0,
            "content": {"content_type": "text", "parts": ["My sourdough starter is called Brine."]},
            "metadata": {}, "recipient": "all"}},
        "n3": {"id": "n3", "parent": "n2", "children": [], "message": {
            "id": "n3", "author": {"role": "assistant"}, "create_time": 1790003700.0,
            "content": {"content_type": "text", "parts": ["A fine name for a starter."]},
            "metadata": {}, "recipient": "all"}},
    }}]

CLAUDE_AI = [{
    "uuid": "ca-1", "name": "Kiln schedule", "created_at": "2026-09-01T10:00:00.000000Z",
    "updated_at": "2026-09-01T10:05:00.000000Z", "account": {"uuid": "acc"},
    "chat_messages": [
        {"uuid": "m1", "sender": "human", "created_at": "2026-09-01T10:00:00.000000Z",
         "text": "The glaze kiln fires every second Tuesday.", "content": [
             {"type": "text", "text": "The glaze kiln fires every second Tuesday."}],
         "attachments": [], "files": [{"file_name": "kiln-log.csv"}]},
        {"uuid": "m2", "sender": "assistant", "created_at": "2026-09-01T10:00:09.000000Z",
         "text": "Got it: every second Tuesday.", "content": [
             {"type": "text", "text": "Got it: every second Tuesday."}],
         "attachments": [], "files": []},
    ]}]


@pytest.fixture
def env(tmp_path: Path, cfg: Config) -> dict[str, str]:
    e = dict(os.environ, BRAINFS_CONFIG="/dev/null", BRAINFS_CACHE_DIR=str(tmp_path / "cache"),
             BRAINFS_EMBEDDER="none", BRAINFS_RECALL_WARMUP="0", AWS_ENDPOINT_URL=cfg.endpoint_url)
    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "BRAINFS_IMPORT_SPEAKERS"):
        e.pop(k, None)
    return e


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "brainfs.front.cli", "import-sessions", *args], env=env,
                          capture_output=True, text=True, timeout=300)


def transcripts(store: ObjectStore) -> dict[str, tuple[dict, str]]:
    out = {}
    for o in store.list("sessions"):
        if o.path.endswith("/transcript.md"):
            meta, body, _ = split_frontmatter(store.get(o.path)[0].decode())
            out[o.path] = (meta, body)
    return out


def test_plain_transcript_dated_from_its_title_or_date_option(tmp_path, corpus: CorpusURL,
                                                             store: ObjectStore, env):
    f = tmp_path / "call.md"
    f.write_text(PLAIN)
    os.utime(f, (1_700_000_000, 1_700_000_000))  # 14 November 2023: not the session's date
    r = cli(str(f), str(corpus), env=env)
    assert r.returncode == 0, r.stderr
    ((path, (meta, _)),) = transcripts(store).items()
    assert str(meta["date"]).startswith("2026-11-03") and "/2026-11-03-" in path
    g = tmp_path / "other.md"
    g.write_text(PLAIN.replace("# Planning call, 3 November 2026", "# Planning call"))
    r = cli(str(g), str(corpus), "--date", "4 November 2026", env=env)
    assert r.returncode == 0, r.stderr
    dates = sorted(str(m["date"])[:10] for m, _b in transcripts(store).values())
    assert dates == ["2026-11-03", "2026-11-04"]
    r = cli(str(g), str(corpus), "--date", "someday", env=env)
    assert r.returncode == 1 and "--date 'someday': not a date" in r.stderr


def test_turn_times_kept_and_recall_dates_turns_exactly(tmp_path, corpus: CorpusURL,
                                                       store: ObjectStore, env):
    (tmp_path / "cc").mkdir()
    (tmp_path / "cc" / "s-1.jsonl").write_text("\n".join(json.dumps(r) for r in CC) + "\n")
    (tmp_path / "cc" / "conversations.json").write_text(json.dumps(CHATGPT))
    r = cli(str(tmp_path / "cc"), str(corpus), env=env)
    assert r.returncode == 0, r.stderr
    got = transcripts(store)
    cc = next(m for m, _b in got.values() if str(m["source"]).startswith("claude-code"))
    assert cc["turn_times"] == {"D1:1": "2026-10-05T08:00:00Z", "D1:2": "2026-10-05T08:00:04Z",
                                "D1:3": "2026-10-05T13:30:00Z"}
    cg = next(m for m, _b in got.values() if str(m["source"]).startswith("chatgpt"))
    t2 = _dt.datetime.fromtimestamp(1790003700, _dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert cg["turn_times"]["D1:2"] == t2
    # the index's reader dates each turn by its own time; recall returns that date
    ix = SearchIndex(tmp_path / "ix.sqlite")
    files = [(p, "1") for p in got]
    ix.refresh(files, lambda p: store.get(p)[0], None)
    chunks = {c.anchor: c for p in got for c in chunk_file(p, store.get(p)[0])}
    assert chunks["D1:3"].updated.startswith("2026-10-05T13:30")
    res = retrieve(ix, "tripod leg snapped on the pier", k=3, embedder=None)
    top = res.cards[0]
    assert top.anchor == "D1:3" and top.updated.startswith("2026-10-05T13:30"), top
    ix.close()


def test_speaker_mapping_option_and_setting(tmp_path, corpus: CorpusURL, store: ObjectStore, env):
    (tmp_path / "s-1.jsonl").write_text("\n".join(json.dumps(r) for r in CC) + "\n")
    r = cli(str(tmp_path / "s-1.jsonl"), str(corpus), "--speaker", "User=Nadia", env=env)
    assert r.returncode == 0, r.stderr
    ((meta, body),) = transcripts(store).values()
    assert meta["participants"] == ["Nadia", "Claude"] and "[D1:1] Nadia: The ferry" in body
    (tmp_path / "chat.md").write_text(PLAIN)
    r = cli(str(tmp_path / "chat.md"), str(corpus), env=dict(env, BRAINFS_IMPORT_SPEAKERS="User=Nadia Rahman"))
    assert r.returncode == 0, r.stderr
    plain = next(b for m, b in transcripts(store).values() if str(m["source"]).startswith("text"))
    assert "Nadia Rahman: Can we move" in plain and "User:" not in plain
    r = cli(str(tmp_path / "chat.md"), str(corpus), "--speaker", "User", env=env)
    assert r.returncode == 1 and "expected ROLE=NAME" in r.stderr


def test_garbage_last_line_warned_and_counted(tmp_path, corpus: CorpusURL, store: ObjectStore, env):
    f = tmp_path / "s-1.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in CC) + "\n{this is not json\n")
    r = cli(str(f), str(corpus), env=env)
    assert r.returncode == 0, r.stderr
    assert f"{f}:4: the last line is not a JSON record" in r.stderr and "1 line left out" in r.stderr
    assert "1 unreadable line(s) left out (see the warnings)" in r.stdout, r.stdout  # counted
    ((meta, body),) = transcripts(store).values()
    assert body.count("[D1:") == 3


def test_garbage_line_in_the_middle_warned_counted_and_the_rest_imported(
        tmp_path, corpus: CorpusURL, store: ObjectStore, env):
    """A damaged line inside a log (two processes writing at once, a bad copy) is left out as
    the last one is: named in a warning, counted in the summary; the log's other turns are
    imported. A file with more damaged lines than records is no log and is refused."""
    f = tmp_path / "s-1.jsonl"
    recs = [json.dumps(x) for x in CC]
    f.write_text("\n".join(recs[:2] + ['{"type": "user", "message": {"content": "cut'] + recs[2:]) + "\n")
    r = cli(str(f), str(corpus), env=env)
    assert r.returncode == 0, r.stderr
    assert f"{f}:3: not a JSON record (unterminated string starting at line 1, column" in r.stderr, r.stderr
    assert "1 unreadable line(s) left out" in r.stdout and "1 new session(s)" in r.stdout, r.stdout
    ((_meta, body),) = transcripts(store).values()
    assert "[D1:3] User: Back from Awaji" in body
    g = tmp_path / "notes.jsonl"
    g.write_text("plain text\nmore text\n" + recs[0] + "\n")
    r = cli(str(g), str(corpus), env=env)
    assert r.returncode == 1 and "2 of its 3 lines are not JSON records (the first: line 1)" in r.stderr


def test_a_damaged_line_fixed_later_is_imported_and_said_to_be_out_of_place(
        tmp_path, corpus: CorpusURL, store: ObjectStore, env):
    """A line left out as damaged and fixed in the source is imported by the next import:
    after the turns it preceded (their anchors stay as cited), with its own time and a
    warning that says so, not silently out of order."""
    f = tmp_path / "s-1.jsonl"
    recs = [json.dumps(x) for x in CC]
    mid = json.dumps({"type": "user", "sessionId": "s-1", "uuid": "u2b",
                      "timestamp": "2026-10-05T08:10:00.000Z",
                      "message": {"role": "user", "content": "And the spare battery."}})
    f.write_text("\n".join(recs[:2] + [mid[:40]] + recs[2:]) + "\n")
    r = cli(str(f), str(corpus), env=env)
    assert r.returncode == 0 and "1 unreadable line(s) left out" in r.stdout, (r.stdout, r.stderr)
    f.write_text("\n".join(recs[:2] + [mid] + recs[2:]) + "\n")
    r = cli(str(f), str(corpus), env=env)
    assert r.returncode == 0 and "1 grown" in r.stdout and "1 turns written" in r.stdout, r.stdout
    ((path, (meta, body)),) = transcripts(store).items()
    assert "[D1:3] User: Back from Awaji" in body and "[D1:4] User: And the spare battery." in body
    assert meta["turn_times"]["D1:4"] == "2026-10-05T08:10:00Z"
    assert (f"{path}: 1 turn(s) the source holds before turns already imported (left out by an "
            f"earlier import, readable now) were added at the end") in r.stderr, r.stderr
    r = cli(str(f), str(corpus), env=env)
    assert "0 grown, 1 unchanged" in r.stdout and "added at the end" not in r.stderr, (r.stdout, r.stderr)


def test_a_log_imported_during_a_tool_call_grows_without_a_second_call(
        tmp_path, corpus: CorpusURL, store: ObjectStore, env):
    """A Claude Code log imported while its session runs can end between a tool call and its
    result. The next import finds that call's turn (now with its result) instead of writing
    the call again and warning that imported turns were edited."""
    use = {"type": "assistant", "sessionId": "s-1", "uuid": "t1", "timestamp": "2026-10-05T08:00:05.000Z",
           "message": {"role": "assistant", "id": "m2", "content": [
               {"type": "tool_use", "id": "tu1", "name": "Bash", "input": {"command": "ls (the tripod photos)"}}]}}
    res = {"type": "user", "sessionId": "s-1", "uuid": "t2", "timestamp": "2026-10-05T08:00:06.000Z",
           "message": {"role": "user", "content": [
               {"type": "tool_result", "tool_use_id": "tu1", "content": "a.jpg\nb.jpg"}]}}
    f = tmp_path / "s-1.jsonl"
    recs = [json.dumps(x) for x in CC[:2] + [use]]
    f.write_text("\n".join(recs) + "\n")
    assert cli(str(f), str(corpus), env=env).returncode == 0
    f.write_text("\n".join(recs + [json.dumps(res), json.dumps(CC[2])]) + "\n")
    r = cli(str(f), str(corpus), env=env)
    assert r.returncode == 0 and "1 grown" in r.stdout and "1 turns written" in r.stdout, r.stdout
    assert "differ from the source's" not in r.stderr, r.stderr
    ((_meta, body),) = transcripts(store).values()
    assert body.count("[tool: Bash]") == 1 and "[D1:4] User: Back from Awaji" in body, body


def test_a_record_holding_a_line_separator_is_one_record(tmp_path, corpus: CorpusURL,
                                                         store: ObjectStore, env):
    """A message with a raw U+2028 or U+0085 (pasted from a PDF or a web page; JSON writers
    leave them unescaped) is one line of the log: imported whole, not cut in two lines left
    out as damaged."""
    recs = [dict(x, message=dict(x["message"])) for x in CC]
    recs[0]["message"]["content"] = "Packing list from the PDF:\u2028tripod, spare battery\u0085and the map."
    f = tmp_path / "s-1.jsonl"
    f.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in recs) + "\n", encoding="utf-8")
    r = cli(str(f), str(corpus), env=env)
    assert r.returncode == 0, r.stderr
    assert "not a JSON record" not in r.stderr and "unreadable" not in r.stdout, (r.stdout, r.stderr)
    ((_meta, body),) = transcripts(store).values()
    assert body.count("[D1:") == 3 and "tripod, spare battery" in body, body


def test_claude_ai_export_recognised(tmp_path, corpus: CorpusURL, store: ObjectStore, env):
    d = tmp_path / "claude-export"
    d.mkdir()
    (d / "conversations.json").write_text(json.dumps(CLAUDE_AI))
    (d / "users.json").write_text("[]")
    r = cli(str(d), str(corpus), env=env)
    assert r.returncode == 0, r.stderr
    assert "claude-ai 1" in r.stdout, r.stdout
    ((meta, body),) = transcripts(store).values()
    assert meta["title"] == "Kiln schedule" and str(meta["source"]) == "claude-ai ca-1"
    assert "[D1:1] User: The glaze kiln fires every second Tuesday.\n[attachment: kiln-log.csv]" in body
    assert "[D1:2] Claude: Got it" in body
    assert meta["turn_times"]["D1:2"] == "2026-09-01T10:00:09Z"
    import zipfile

    z = tmp_path / "claude-data.zip"
    with zipfile.ZipFile(z, "w") as zf:
        zf.writestr("conversations.json", json.dumps(CLAUDE_AI))
    r = cli(str(z), str(corpus), env=env)
    assert r.returncode == 0 and "claude-ai 1" in r.stdout and "1 unchanged" in r.stdout, r.stdout + r.stderr


def test_truncated_chatgpt_export_says_where(tmp_path, corpus: CorpusURL, env):
    f = tmp_path / "conversations.json"
    text = json.dumps(CHATGPT)
    f.write_text(text[:text.index("My sourdough") + 5])  # the export cut inside a message
    r = cli(str(f), str(corpus), env=env)
    assert r.returncode == 1
    line = r.stderr.strip().splitlines()[-1]
    assert "at at" not in line and "unterminated string starting at line 1, column" in line, line
    assert "(the file ends inside it: is it complete?)" in line, line
    f.write_text(text[:text.index('"n3": {')])  # cut between two messages
    r = cli(str(f), str(corpus), env=env)
    line = r.stderr.strip().splitlines()[-1]
    assert r.returncode == 1 and "expecting property name enclosed in double quotes at line 1, column" \
        in line and "(the file ends there: is it complete?)" in line, line


def test_new_sessions_listed_in_sessions_index_at_once(tmp_path, corpus: CorpusURL,
                                                      store: ObjectStore, env):
    store.put("sessions/index.md", b"# Sessions\n\n- 2026-01-01-old | 2026-01-01 | Old one\n")
    (tmp_path / "call.md").write_text(PLAIN)
    r = cli(str(tmp_path / "call.md"), str(corpus), env=env)
    assert r.returncode == 0 and "1 added to sessions/index.md" in r.stdout, r.stdout
    text = store.get("sessions/index.md")[0].decode()
    (path,) = transcripts(store)
    sid = path.split("/")[1]
    assert text.splitlines()[-2:] == ["- 2026-01-01-old | 2026-01-01 | Old one",
                                      f"- {sid} | 2026-11-03 | Planning call, 3 November 2026"]
    r = cli(str(tmp_path / "call.md"), str(corpus), env=env)  # again: nothing new, nothing added
    assert r.returncode == 0 and "added to" not in r.stdout
    assert store.get("sessions/index.md")[0].decode() == text


def test_import_says_each_sessions_date_and_where_it_came_from(tmp_path, corpus: CorpusURL,
                                                               store: ObjectStore, env):
    """A copied file's modification time is not when the talk happened: a transcript that
    states no date is dated at import (and says so, with how to give one); the output names
    each new session's date and its source."""
    (tmp_path / "call.md").write_text(PLAIN)
    undated = tmp_path / "undated.md"
    undated.write_text(PLAIN.replace("# Planning call, 3 November 2026", "# Planning call"))
    for f in (tmp_path / "call.md", undated):
        os.utime(f, (1_700_000_000, 1_700_000_000))  # 14 November 2023
    before = _dt.datetime.now(_dt.timezone.utc).date().isoformat()
    r = cli(str(tmp_path), str(corpus), env=env)
    after = _dt.datetime.now(_dt.timezone.utc).date().isoformat()
    assert r.returncode == 0, r.stderr
    sids = {str(m["title"]): p.split("/")[1] for p, (m, _b) in transcripts(store).items()}
    titled = sids["Planning call, 3 November 2026"]
    assert f"{titled}: dated 2026-11-03 from its title ('3 November 2026')" in r.stdout, r.stdout
    plain = sids["Planning call"]
    assert plain[:10] in (before, after) and "2023-11-14" not in r.stdout, r.stdout
    assert f"{plain}: dated {plain[:10]} at import (the file states no date; give --date DATE)" \
        in r.stdout, r.stdout
    # --date dates a source that records no time; a log keeps its own timestamps
    (tmp_path / "more").mkdir()
    (tmp_path / "more" / "chat.json").write_text(json.dumps(
        {"id": "m-1", "messages": [{"role": "user", "content": "The loom needs a new heddle."}]}))
    (tmp_path / "more" / "s-1.jsonl").write_text("\n".join(json.dumps(x) for x in CC) + "\n")
    r = cli(str(tmp_path / "more"), str(corpus), "--date", "2026-08-01", env=env)
    assert r.returncode == 0, r.stderr
    lines = [x for x in r.stdout.splitlines() if ": dated " in x]
    assert any(x.startswith("2026-08-01-") and x.endswith("dated 2026-08-01 from --date") for x in lines), lines
    assert any(x.startswith("2026-10-05-") and x.endswith("dated 2026-10-05 from its first turn's own time")
               for x in lines), lines


def test_user_kept_as_written_is_said_and_a_later_mapping_finds_its_turns(
        tmp_path, corpus: CorpusURL, store: ObjectStore, env):
    """Without a mapping "User" stays "User", and the output says that dream takes it for
    the memory's owner; importing again with ``--speaker User=Nadia`` does not append the
    same turns a second time under the new name."""
    f = tmp_path / "s-1.jsonl"
    f.write_text("\n".join(json.dumps(x) for x in CC) + "\n")
    r = cli(str(f), str(corpus), env=env)
    assert r.returncode == 0, r.stderr
    assert ("speaker 'User' kept as 'User' in 1 session(s): dream takes 'User' for the memory's "
            "owner") in r.stdout and "--speaker User=NAME" in r.stdout, r.stdout
    r = cli(str(f), str(corpus), "--speaker", "User=Nadia", env=env)
    assert r.returncode == 0, r.stderr
    assert "0 new session(s), 0 grown, 1 unchanged" in r.stdout and "kept as" not in r.stdout, r.stdout
    ((_meta, body),) = transcripts(store).values()
    assert body.count("[D1:") == 3


def test_a_transcript_imported_before_turn_times_gets_them_and_reads_as_before(
        tmp_path, corpus: CorpusURL, store: ObjectStore, env):
    """A transcript without ``turn_times`` (as imports wrote them before) is read as before:
    every turn dated by ``date``. Importing its source again adds the turns' own times and
    nothing else; a third import writes nothing."""
    f = tmp_path / "s-1.jsonl"
    f.write_text("\n".join(json.dumps(x) for x in CC) + "\n")
    r = cli(str(f), str(corpus), env=env)
    assert r.returncode == 0, r.stderr
    ((path, (meta, body)),) = transcripts(store).items()
    del meta["turn_times"]  # the form of an earlier import
    import yaml

    old = "---\n" + yaml.safe_dump(meta, sort_keys=False) + "---\n" + body
    store.put(path, old.encode())
    chunks = {c.anchor: c for c in chunk_file(path, old.encode())}
    assert [c.updated[:16] for c in chunks.values()] == ["2026-10-05T08:00"] * 3
    assert chunks["D1:3"].text.startswith("User (5 October 2026): Back from Awaji")
    r = cli(str(f), str(corpus), env=env)
    assert r.returncode == 0 and "1 given their turns' own times" in r.stdout, r.stdout
    ((meta2, body2),) = transcripts(store).values()
    assert body2 == body and meta2["turn_times"]["D1:3"] == "2026-10-05T13:30:00Z"
    chunks = {c.anchor: c for c in chunk_file(path, store.get(path)[0])}
    assert chunks["D1:3"].updated.startswith("2026-10-05T13:30")
    r = cli(str(f), str(corpus), env=env)
    assert r.returncode == 0 and "0 grown, 1 unchanged" in r.stdout and "given their" not in r.stdout


def test_many_new_sessions_dates_listed_then_summed_and_a_date_in_the_file_name(
        tmp_path, corpus: CorpusURL, store: ObjectStore, env):
    """Ten sessions' dates are listed one a line (those the source did not time first), the
    rest summed by where their dates came from; a date written in a file's name dates it."""
    d = tmp_path / "calls"
    d.mkdir()
    (d / "Planning call 3 November 2026.txt").write_text("User: Book the small room.\nAssistant: Done.\n")
    for i in range(11):
        (d / f"chat-{i}.md").write_text(f"User: Question number {i} about the kiln.\nAssistant: Answer {i}.\n")
    r = cli(str(d), str(corpus), env=env)
    assert r.returncode == 0, r.stderr
    lines = [x for x in r.stdout.splitlines() if ": dated " in x]
    assert len(lines) == 10, r.stdout
    assert lines[0].endswith(": dated 2026-11-03 from its file name ('3 November 2026')"), lines
    assert "… and 2 more new session(s) dated by the import's time (2)" in r.stdout, r.stdout


def test_plain_transcript_times_before_speakers_are_kept(tmp_path, corpus: CorpusURL,
                                                         store: ObjectStore, env):
    """A chat or meeting log's "[23:58] Nadia: …" lines keep their times in turn_times, on the
    day the transcript states (past midnight the next day); a full "[2026-11-03 10:02]" dates
    the session itself. A time in an agenda line inside a turn stays text."""
    d = tmp_path / "logs"
    d.mkdir()
    (d / "late.md").write_text("# Planning call, 3 November 2026\n\n[23:58] Nadia: Can we move the review?\n"
                               "[23:59] Omar: Yes.\n09:00 Standup: moves to Thursday\n"
                               "[00:01] Nadia: Good night.\n")
    (d / "chat.txt").write_text("[2026-10-20 10:02] Nadia: The kiln is fixed.\n"
                                "[2026-10-20 10:05] Omar: Great, firing on Tuesday.\n")
    r = cli(str(d), str(corpus), env=env)
    assert r.returncode == 0, r.stderr
    got = {str(m["source"]): (m, b) for m, b in transcripts(store).values()}
    meta, body = got["text late.md"]
    assert meta["turn_times"] == {"D1:1": "2026-11-03T23:58:00Z", "D1:2": "2026-11-03T23:59:00Z",
                                  "D1:3": "2026-11-04T00:01:00Z"}
    assert "[D1:2] Omar: Yes.\n09:00 Standup: moves to Thursday\n\n[D1:3] Nadia: Good night." in body
    assert "dated 2026-11-03 from its title ('3 November 2026')" in r.stdout, r.stdout
    meta, body = got["text chat.txt"]
    assert meta["turn_times"]["D1:2"] == "2026-10-20T10:05:00Z" and str(meta["date"]).startswith("2026-10-20T10:02")
    assert "dated 2026-10-20 from its first turn's own time" in r.stdout, r.stdout


def test_a_time_written_a_minute_out_of_order_stays_on_the_same_day(tmp_path, corpus: CorpusURL,
                                                                    store: ObjectStore, env):
    """A meeting log whose line is a minute behind the one before (an edit, two clocks) is
    one session on its stated day: only a step back of more than an hour is past midnight."""
    f = tmp_path / "standup.md"
    f.write_text("# Standup, 3 November 2026\n\n[10:02] Nadia: The caption study is on track.\n"
                 "[10:05] Omar: I will send the figures today.\n[10:04] Nadia: Also book the room.\n"
                 "[10:06] Omar: Done.\n")
    r = cli(str(f), str(corpus), env=env)
    assert r.returncode == 0 and "1 new session(s)" in r.stdout, (r.stdout, r.stderr)
    ((path, (meta, body)),) = transcripts(store).items()
    assert "/2026-11-03-" in path and meta["turn_times"]["D1:3"] == "2026-11-03T10:04:00Z", meta
    assert "[D1:4] Omar: Done." in body


def test_a_file_name_that_is_not_utf8_is_imported(tmp_path, corpus: CorpusURL, store: ObjectStore, env):
    """A transcript whose name is Latin-1 bytes (an old disk, a zip from elsewhere) in a
    folder of others is imported, named with U+FFFD, and found again by the next import;
    before, the whole folder failed with 'surrogates not allowed'."""
    d = tmp_path / "calls"
    d.mkdir()
    with open(os.path.join(os.fsencode(d), b"caf\xe9 call.md"), "wb") as f:
        f.write(PLAIN.encode())
    (d / "other.md").write_text(PLAIN.replace("Thursday", "Friday"))
    r = cli(str(d), str(corpus), env=env)
    assert r.returncode == 0 and "2 new session(s)" in r.stdout, (r.stdout, r.stderr)
    sources = sorted(str(m["source"]) for m, _b in transcripts(store).values())
    assert sources == ["text caf\ufffd call.md", "text other.md"], sources
    r = cli(str(d), str(corpus), env=env)
    assert r.returncode == 0 and "0 new session(s), 0 grown, 2 unchanged" in r.stdout, (r.stdout, r.stderr)


def test_an_agenda_of_pm_times_inside_a_turn_stays_text(tmp_path, corpus: CorpusURL,
                                                       store: ObjectStore, env):
    """'1:00 PM: lunch' inside a turn is an agenda line: its 'PM' is the time's, not a
    speaker 'PM' whose turns take the agenda's times (read as 01:00) and the next line."""
    f = tmp_path / "offsite.md"
    f.write_text("# Offsite plan, 3 November 2026\n\nNadia: Here is the agenda for Friday.\n"
                 "1:00 PM: lunch at the harbour\n2:30 PM: review of the caption study\n"
                 "Omar: Looks good.\nNadia: Book the room then.\nOmar: Booked.\n")
    r = cli(str(f), str(corpus), env=env)
    assert r.returncode == 0, r.stderr
    ((meta, body),) = transcripts(store).values()
    assert meta["participants"] == ["Nadia", "Omar"] and "turn_times" not in meta, meta
    assert "[D1:1] Nadia: Here is the agenda for Friday.\n1:00 PM: lunch at the harbour\n" in body, body
    assert "[D1:2] Omar: Looks good." in body


def test_dates_written_year_first_with_slashes_or_dots(tmp_path, corpus: CorpusURL,
                                                       store: ObjectStore, env):
    """'2026/11/06' in a title and 'standup_2026.11.05' as a name date their transcripts
    ('03/11/2026' is day or month first depending on who wrote it, and is not read)."""
    d = tmp_path / "notes"
    d.mkdir()
    (d / "standup_2026.11.05.md").write_text("User: The kiln is fixed.\nAssistant: Good.\n")
    (d / "sync.md").write_text("# Sync, 2026/11/06\n\nUser: Firing on Tuesday.\nAssistant: Noted.\n")
    r = cli(str(d), str(corpus), env=env)
    assert r.returncode == 0, r.stderr
    assert "dated 2026-11-05 from its file name ('2026.11.05')" in r.stdout, r.stdout
    assert "dated 2026-11-06 from its title ('2026/11/06')" in r.stdout, r.stdout


def test_a_date_still_to_come_is_pointed_out(tmp_path, corpus: CorpusURL, store: ObjectStore, env):
    """A title that names a plan's day ('Launch plan for 3 December 2099') dates the session
    by it, and the output says that day is still to come and how to give the talk's."""
    f = tmp_path / "launch.md"
    f.write_text("# Launch plan for 3 December 2099\n\nUser: Book the hall.\nAssistant: Booked.\n")
    r = cli(str(f), str(corpus), env=env)
    assert r.returncode == 0, r.stderr
    assert ("dated 2099-12-03 from its title ('3 December 2099') — a day still to come: give "
            "--date DATE if the talk was earlier") in r.stdout, r.stdout

"""``brainfs mcp``: one memory as an MCP server over stdio (the official ``mcp`` SDK).

Agents in MCP clients (Claude Desktop, Cursor, an SDK client) reach the memory through
tools that call the Python API (:class:`brainfs.front.api.Memory`), so a tool answers with
the same cards, reasons and errors as the command line:

- ``recall(query, k, as_of, history)``: the synthesis ``brainfs recall`` prints (or its
  JSON): what is true now first, a replaced value marked ``superseded by …``;
- ``context(task, budget, reserve, format, as_of, history)``: the context window as
  ``brainfs context`` renders it (as of a day: what the memory held then);
- ``read(path)``, ``list(folder)``: a file's text, the corpus's files under a folder;
- ``write_note(text, topic, title)``: a new memory card under ``notes/``;
- ``write(path, text, append)``: create, replace or append to a file;
- ``correct(text, scope)``, ``forget(phrase)``: a correction, a deletion request;
- ``dream_pending(limit)``, ``dream_submit(answers, agent)``: the agent as the wiki's writer
  (pages waiting for text with their evidence; texts back, verified, committed naming it);
- ``history(path, limit)``, ``diff(path, old, new)``: the wiki's git history of one file;
- ``dream(dry_run)``, ``dream_status()``: ask for a run of the wiki maintainer, and how it went;

two resources, ``memory://knowledge/INDEX.md`` and ``memory://GUIDE.md``, and the template
``memory://{+path}`` for any file. A tool's
error is a tool result with ``isError`` and one line that starts with the tool's name and
names the fix (a rejected argument too); a resource's is a protocol error with the same
line. ``--read-only``, or a mount mounted read-only, offers the reading tools (history,
diff and dream_status among them) and answers a call of a writing tool, ``dream``
included, with why it is refused. Nothing but protocol goes to stdout: logging goes to
stderr.
"""

from __future__ import annotations

import datetime as _dt
import fcntl
import json
import logging
import os
import pickle
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from brainfs.backend.errors import BackendError
from brainfs.cache.layout import GUIDE_PATH, INDEX_PATH

from .api import Memory, UsageError, status_of

# Imported inside the functions that use them: the SDK (mcp, pydantic: the optional `mcp`
# extra), dream and the embedder (loaded when a tool asks), and the command line's version
# (the dream run's child process imports this module and needs none of them).

log = logging.getLogger("brainfs.mcp")

T = TypeVar("T")

INSTRUCTIONS = (
    "This server is the user's long-term memory (brainfs). Call `recall` with a question in "
    "plain words before answering anything that may depend on the past; `context` assembles "
    "a whole turn's memory under a token budget. Read files by the paths recall and list "
    "give. Record what should be remembered with `write_note`, and corrections of earlier "
    "facts with `correct`."
)


def build_server(memory: Memory, read_only: bool = False) -> Any:
    """The MCP server (an ``mcp.server.mcpserver.MCPServer``) over ``memory``. With
    ``read_only``, or over a mount mounted read-only, the writing tools are not offered,
    and a call of one says why."""
    from .cli.common import version

    why = "brainfs mcp --read-only" if read_only else ""
    if not read_only and memory.mountpoint is not None:
        # Its writes would fail with EROFS, and a dream run would write the bucket behind it.
        if status_of(memory.mountpoint).get("read_only"):
            read_only, why = True, f"{memory.mountpoint} is mounted read-only"
    refused = {n: _read_only_refusal(n, memory, why) for n in WRITING_TOOLS} if read_only else {}
    server = _strict_server_class(refused)("brainfs", version=version(),
                                           instructions=INSTRUCTIONS, log_level="WARNING")
    call = _one_call_at_a_time()
    runs = DreamRuns(memory)
    _add_reading_tools(server, memory, call, runs)
    _add_resources(server, memory, call)
    if not read_only:
        _add_writing_tools(server, memory, call, runs)
        _add_agent_writer_tools(server, memory, call)
    return server


#: The tools a ``--read-only`` server does not offer: they write to the memory or start a
#: dream run (which writes the wiki), or hand out dream's pending work.
WRITING_TOOLS = ("write_note", "write", "correct", "forget", "dream", "dream_pending",
                 "dream_submit")


def _read_only_refusal(name: str, memory: Memory, reason: str) -> str:
    """What a read-only server (read-only for ``reason``) answers to a call of the writing
    tool ``name``."""
    why = f"{name}: this server is read-only ({reason})"
    if name == "dream":
        return (f"{why} and starts no dream run; dream_status tells whether one is running, "
                f"`brainfs dream {memory.url}` or a server without --read-only starts one")
    return (f"{why} and writes nothing to the memory; recall, context, read, list, history, "
            "diff and dream_status answer")


def _strict_server_class(refused: dict[str, str] | None = None) -> type:
    """``MCPServer`` that refuses a tool call naming an argument the tool does not have.
    The SDK's argument models drop unknown keys, so ``list(foldr="notes")`` would list
    the whole memory and ``recall(query=..., limit=3)`` would return the default count:
    a misspelt argument must be an error the model can read and fix, not a wrong answer.

    Every tool error is one line starting with the tool's name ("recall: …"), whether the
    arguments were rejected or the call failed; a tool this server does not offer is
    answered with ``refused[name]`` (a read-only server's writing tools) or the list of
    the tools it has."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
    from pydantic import ValidationError

    refused = refused or {}

    class StrictServer(MCPServer):
        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
            known = {t.name: t for t in await self.list_tools()}
            tool = known.get(name)
            if tool is None:
                raise ToolError(refused.get(name) or f"{name}: no such tool; the tools are "
                                f"{', '.join(sorted(known))}")
            allowed = set((tool.input_schema or {}).get("properties", {}))
            unknown = sorted(set(arguments or {}) - allowed)
            if unknown:
                raise ToolError(f"{name}: no argument {', '.join(map(repr, unknown))}; "
                                f"its arguments are {', '.join(sorted(allowed)) or 'none'}")
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as e:
                if isinstance(e.__cause__, ValidationError):
                    raise ToolError(argument_errors(name, e.__cause__, tool)) from None
                if isinstance(e, UnexpectedToolError):  # a crash: the SDK logs its traceback
                    raise UnexpectedToolError(
                        f"{name}: failed ({type(e.__cause__).__name__}); the server's log on "
                        "stderr has the details") from e.__cause__
                # The SDK's "Error executing tool NAME: why" as the argument errors say it.
                msg = str(e).removeprefix(f"Error executing tool {name}: ")
                raise ToolError(msg if msg.startswith(f"{name}: ") else f"{name}: {msg}") from None

    return StrictServer


_TYPE_NAMES = {"string": "a string", "integer": "a whole number", "number": "a number",
               "boolean": "true or false", "array": "a list", "object": "an object"}


def argument_errors(name: str, err: Any, tool: Any) -> str:
    """A tool's rejected arguments as one line a model can act on ("recall: query is
    required (a string); k must be a whole number, got 'ten'"), instead of pydantic's
    multi-line report and its documentation link."""
    props = ((tool.input_schema if tool is not None else None) or {}).get("properties", {})
    parts: list[str] = []
    for e in err.errors():
        field = ".".join(str(x) for x in e.get("loc", ()) if x != "model") or "arguments"
        field = field.split(".")[0]
        spec = props.get(field, {})
        kinds = [t.get("type") for t in spec.get("anyOf", [spec]) if t.get("type") not in (None, "null")]
        want = " or ".join(_TYPE_NAMES.get(k, k) for k in kinds) or "a value"
        if e.get("type") == "missing":
            parts.append(f"{field} is required ({want})")
        else:
            got = e.get("input")
            parts.append(f"{field} must be {want}, got {json.dumps(got) if got is not None else 'null'}")
    parts = list(dict.fromkeys(parts))
    allowed = ", ".join(sorted(props)) or "none"
    return f"{name}: {'; '.join(parts)} (its arguments: {allowed})"[:500]


def _one_call_at_a_time() -> Callable[[Callable[[], T]], T]:
    """A runner for the tools' calls into the memory. The SDK runs plain functions in
    worker threads: one call at a time reaches the memory (its index connection and model
    are shared), and a usage or backend error becomes a one-line tool error."""
    from mcp.server.mcpserver.exceptions import ToolError

    lock = threading.Lock()

    def call(fn: Callable[[], T]) -> T:
        with lock:
            try:
                return fn()
            except (UsageError, BackendError) as e:
                raise ToolError(" ".join(str(e).split())) from None

    return call


class DreamRuns:
    """The dream runs asked for through ``brainfs mcp`` on this machine. A run is a process
    of its own, in a session of its own as a background mount's daemon is: it takes minutes
    without slowing the tools, and it finishes when the client ends this server (MCP
    clients end and restart servers at will; a run killed half way would lose its work
    and hold the dream lease for up to 15 minutes). Its state and report are a JSON file in the
    memory's cache, so the next server tells how the run went."""

    def __init__(self, memory: Memory) -> None:
        self.memory = memory
        self.proc: subprocess.Popen | None = None

    @property
    def path(self) -> Path:
        """The run's state file, beside dream's own work in the memory's cache."""
        url = self.memory.url
        return self.memory.cfg.cache_dir_for(url.bucket, url.prefix) / "dream" / "asked.json"

    def start(self, dry_run: bool) -> str:
        """Start a run unless one asked for here is still going; say which. Two servers on
        this machine asking at once take turns (a lock beside the state file): the second
        sees the first's run, rather than starting one the dream lease then refuses and
        writing its failure over the running one's state."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path.with_name("asked.lock"), os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            return self._start(dry_run)
        finally:
            os.close(fd)  # and the lock with it

    def _start(self, dry_run: bool) -> str:
        st = self.status()
        if st["state"] == "running":
            return (f"a dream run asked for here is in progress (since {st['started']}, "
                    f"process {st['pid']}); dream_status tells when it ends")
        run_log = self.path.with_name("asked.log")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
        with open(run_log, "wb") as out:
            proc = subprocess.Popen(
                [sys.executable, "-c", "from brainfs.front.mcpserver import dream_child; dream_child()"],
                stdin=subprocess.PIPE, stdout=out, stderr=out, env=env, start_new_session=True)
        state = {"state": "running", "dry_run": dry_run, "pid": proc.pid, "started": _now(),
                 "log": str(run_log)}
        # Written before the child has its orders, so its report always comes after.
        _write_json(self.path, state)
        assert proc.stdin is not None
        with proc.stdin:
            pickle.dump((str(self.memory.url), self.memory.cfg, dry_run, str(self.path), state),
                        proc.stdin)
        self.proc = proc
        return (f"started a dream run{' (dry run)' if dry_run else ''} on {self.memory.url} "
                f"(process {proc.pid}); dream_status tells when it ends and what it changed")

    def status(self) -> dict[str, Any]:
        """The last run asked for here: ``state`` (none asked, running, done, failed), when
        it started, and once ended what it changed (``changes``, ``commit``) or ``error``."""
        if self.proc is not None:
            self.proc.poll()  # reaped: an ended child of ours is not "alive"
        for attempt in range(2):
            try:
                st = json.loads(self.path.read_text())
            except (OSError, ValueError):
                return {"state": "none asked"}
            if st.get("state") != "running" or _alive(int(st.get("pid") or 0)):
                return st
            # Ended: its report may have been written since the first read.
        st.update(state="failed", error=f"the run's process ended without a report (killed?); "
                  f"its log: {st.get('log')}")
        return st


def dream_child() -> None:
    """The process :meth:`DreamRuns.start` starts: one dream run with the orders it reads
    (pickled) from stdin, its report written to the run's state file."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    url, cfg, dry_run, path, state = pickle.load(sys.stdin.buffer)
    try:
        with Memory(url, cfg) as m:
            rep = m.dream(dry_run=dry_run)
        res = rep.result
        state.update(state="done", nothing_new=bool(res.nothing_new),
                     changes=[str(c) for c in res.changes][:50], commit=getattr(rep, "commit", None))
    except (UsageError, BackendError) as e:
        state.update(state="failed", error=" ".join(str(e).split()))
    except Exception as e:  # noqa: BLE001 - reported through dream_status
        log.exception("dream run failed")
        state.update(state="failed", error=f"{type(e).__name__}: {e}")
    state["ended"] = _now()
    _write_json(Path(path), state)


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds")


def _write_json(path: Path, data: dict[str, Any]) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(json.dumps(data, indent=2))
    os.replace(tmp, path)


#: What the command line of a run's process holds (:meth:`DreamRuns.start`).
_CHILD_MARK = b"import dream_child"


def _alive(pid: int) -> bool:
    """Whether process ``pid`` is a dream run that runs (a zombie, whose parent has not
    reaped it, does not). The state file outlives its run (a reboot, a run killed), and
    its process id may be another program's since: that one is no run."""
    if pid <= 0:
        return False
    if Path("/proc/self/stat").exists():  # Linux; elsewhere the signal 0 test below
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
            if stat.rsplit(")", 1)[1].split()[0] in ("Z", "X"):
                return False
            return _CHILD_MARK in Path(f"/proc/{pid}/cmdline").read_bytes()
        except FileNotFoundError:
            return False
        except (OSError, IndexError):
            pass
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def _add_reading_tools(server: Any, memory: Memory, call: Callable[[Callable[[], Any]], Any],
                       runs: DreamRuns | None = None) -> None:
    """``recall``, ``context``, ``read``, ``list``, ``history``, ``diff`` and ``dream_status``."""
    from mcp.server.mcpserver.exceptions import ToolError

    runs = runs or DreamRuns(memory)

    @server.tool(description="Hybrid semantic + keyword search of the memory. Returns the "
                 "best passages with their paths, dates and why each was found (set as_json "
                 "for the cards as JSON). k: how many passages (default 10). What is true now "
                 "comes first; a passage stating a replaced value is marked 'superseded by "
                 "<value> (<date>)' (JSON: superseded_by). as_of (YYYY-MM-DD): answer with "
                 "what was true on that day; history: replaced values keep their rank.")
    def recall(query: str, k: int | None = None, as_json: bool = False,
               as_of: str | None = None, history: bool = False) -> str:
        r = call(lambda: memory.recall(query, k, as_of=as_of, history=history))
        return json.dumps(r.to_dict(), indent=2) if as_json else r.text()

    @server.tool(description="Assemble the memory context for a task under a token budget: "
                 "scope, guide, index, pinned notes, cards, thread and files lanes, every item "
                 "with its reason. format: markdown (default), prompt (only the admitted text) "
                 "or json. as_of (YYYY-MM-DD): the context as the memory stood at the end of "
                 "that day (later statements left out, values replaced later shown as they "
                 "stood); history: replaced values keep their place, marked.")
    def context(task: str, budget: int = 8000, reserve: int | None = None,
                format: str = "markdown", as_of: str | None = None,
                history: bool = False) -> str:
        if format not in ("markdown", "prompt", "json"):
            raise ToolError(f"format must be markdown, prompt or json (got {format!r})")
        w = call(lambda: memory.context(task, budget=budget, reserve=reserve, as_of=as_of,
                                        history=history))
        if format == "json":
            return json.dumps(w.to_json(), indent=2)
        return w.to_prompt() if format == "prompt" else w.to_markdown()

    @server.tool(description="Read one file of the memory by its path (e.g. GUIDE.md, "
                 "knowledge/INDEX.md, sessions/<id>/transcript.md).")
    def read(path: str) -> str:
        return call(lambda: memory.read(path))

    @server.tool(name="list", description="Every file of the memory under a folder "
                 "(recursive; empty for all), one path a line.")
    def list_files(folder: str = "") -> str:
        return "\n".join(call(lambda: memory.list(folder))) + "\n"

    @server.tool(description="The history of one file the wiki maintainer (dream) writes — a "
                 "page such as knowledge/mara.md, knowledge/INDEX.md, a summary: the dream runs "
                 "that changed it, newest first, one 'commit date message' a line (git log of "
                 "that file). limit: how many (default 20).")
    def history(path: str, limit: int = 20) -> str:
        rows = call(lambda: memory.history(path, limit))
        if not rows:
            return f"{path}: no version in the wiki's history (dream never wrote it)\n"
        return "".join(f"{r['commit'][:12]} {r['date']} {r['message']}\n" for r in rows)

    @server.tool(description="What changed in one file of the wiki between two versions, as a "
                 "unified diff: old and new are commits as history lists them (or HEAD, "
                 "HEAD~N); by default the file's last change.")
    def diff(path: str, old: str | None = None, new: str | None = None) -> str:
        return call(lambda: memory.diff(path, old, new)) or f"{path}: no change between {old} and {new}\n"

    @server.tool(description="Whether a dream run (the wiki maintainer) is in progress on this "
                 "memory, the last run that changed the wiki, and how the last run asked for with "
                 "the dream tool went (requested_here; one asked for through an earlier server "
                 "too).")
    def dream_status() -> str:
        # The run's own state first: its process writes "done" only after giving the lease
        # up, so a lease read afterwards agrees with it (read the other way round, a run
        # ending between the two reads showed "done" and "running" at once).
        requested = runs.status()
        got = call(memory.dream_status)
        got["requested_here"] = requested
        return json.dumps(got, indent=2)


def _add_resources(server: Any, memory: Memory, tool_call: Callable[[Callable[[], Any]], Any]) -> None:
    """The wiki's index, the user's guide and any file by its path, as resources. A read
    that fails is a resource error with the tool's one line ("x.md: no such file in
    s3://…"), not the SDK's "Error reading resource" without the reason."""
    from mcp.server.mcpserver.exceptions import ResourceError, ToolError

    def call(fn: Callable[[], str]) -> str:
        try:
            return tool_call(fn)
        except ToolError as e:
            raise ResourceError(str(e)) from None

    @server.resource(f"memory://{INDEX_PATH}", name="wiki index", mime_type="text/markdown",
                     description="The wiki's index: one line per subject, the user first")
    def wiki_index() -> str:
        return call(lambda: memory.read(INDEX_PATH))

    @server.resource(f"memory://{GUIDE_PATH}", name="guide", mime_type="text/markdown",
                     description="The user's standing instructions for the agent")
    def guide() -> str:
        return call(lambda: memory.read(GUIDE_PATH))

    @server.resource("memory://{+path}", name="memory file", mime_type="text/markdown",
                     description="Any file of the memory by its path, e.g. "
                     "memory://knowledge/mara.md or memory://sessions/<id>/transcript.md")
    def any_file(path: str) -> str:
        return call(lambda: memory.read(path))


def _add_writing_tools(server: Any, memory: Memory, call: Callable[[Callable[[], Any]], Any],
                       runs: DreamRuns | None = None) -> None:
    """``write_note``, ``write``, ``correct``, ``forget`` and ``dream`` (not on a read-only
    server)."""
    runs = runs or DreamRuns(memory)

    @server.tool(description="Ask for a run of the wiki maintainer (dream): it summarizes new "
                 "sessions, applies corrections and forget requests, and updates the wiki. It "
                 "runs in the background, in a process of its own that finishes even when this "
                 "server ends (minutes on a large memory); dream_status tells when it ends "
                 "and what it changed. dry_run: compute the changes, write nothing.")
    def dream(dry_run: bool = False) -> str:
        return runs.start(dry_run)

    @server.tool(description="Remember something: a new memory card notes/<topic>/<date>-"
                 "<slug>.md with the text. Returns its path.")
    def write_note(text: str, topic: str = "agent", title: str | None = None) -> str:
        path = call(lambda: memory.note(text, topic=topic, title=title))
        return f"wrote {path}"

    @server.tool(description="Create or replace a file of the memory (append=true: add the "
                 "text at its end, creating it when missing). Returns its path.")
    def write(path: str, text: str, append: bool = False) -> str:
        p = call(lambda: memory.append(path, text) if append else memory.write(path, text))
        return f"{'appended to' if append else 'wrote'} {p}"

    @server.tool(description="Record a correction of an earlier fact (e.g. 'Mara moved to "
                 "Osaka in May 2024'); the next dream run updates the wiki and the cards.")
    def correct(text: str, scope: str = "global") -> str:
        path = call(lambda: memory.correct(text, scope))
        return f"recorded {path}; the next dream run applies it"

    @server.tool(description="Ask the memory to forget a phrase: the search index drops it at "
                 "its next build, the next dream run removes it from the wiki and transcripts.")
    def forget(phrase: str) -> str:
        path = call(lambda: memory.forget(phrase))
        return f"recorded {path}; the next index and dream runs apply it"


def _add_agent_writer_tools(server: Any, memory: Memory, call: Callable[[Callable[[], Any]], Any]) -> None:
    """``dream_pending`` and ``dream_submit``: the agent as the wiki's writer
    (dream/agentwork.py). Dream hands out the pages whose facts changed, with their numbered
    evidence; the agent writes them with its own model and hands them back; dream checks
    every sentence as it checks a model's and commits what passes, naming the agent."""
    from mcp.server.mcpserver.exceptions import ToolError

    def workdir():
        return memory.cfg.cache_dir_for(memory.url.bucket, memory.url.prefix) / "dream"

    @server.tool(description="The wiki pages (and session summaries) waiting for text: each "
                 "with its key, its instructions and its numbered evidence. Write them with "
                 "your own model and give them back with dream_submit. limit: how many items "
                 "(default 5).")
    def dream_pending(limit: int = 5) -> str:
        from brainfs.dream.agentwork import pending_s3

        if limit < 1:
            raise ToolError("limit must be at least 1")
        return json.dumps(call(lambda: pending_s3(memory.store, workdir(), limit)), indent=2)

    @server.tool(description="Hand back page texts written for dream_pending's items, as "
                 "{key: text}. Dream verifies every sentence against the turn it cites and "
                 "publishes what passes in one commit naming you (agent: your name, e.g. "
                 "'claude-code'); a page that fails stays pending, with the reason.")
    def dream_submit(answers: dict[str, str], agent: str) -> str:
        from brainfs.dream.agentwork import submit_s3
        from brainfs.dream.sync import LeaseHeld

        if not answers:
            raise ToolError("answers is empty: give {key: text} for items of dream_pending")
        embedder = None
        if memory.cfg.recall.embedder != "none":
            from brainfs.cache.search.embedder import EmbedderUnavailable, load_embedder

            try:
                embedder = load_embedder(memory.cfg.recall.embedder)
            except EmbedderUnavailable:
                embedder = None  # lexical verification, as `brainfs dream` without the model

        def run() -> dict:
            try:
                return submit_s3(memory.store, workdir(), answers, agent, embedder)
            except LeaseHeld as e:
                raise ToolError(f"{' '.join(str(e).split())}; try again when that run is done") from None
        return json.dumps(call(run), indent=2)


def serve(memory: Memory, read_only: bool = False) -> int:
    """Serve ``memory`` over stdin/stdout until the client closes the stream."""
    server = build_server(memory, read_only=read_only)
    try:
        server.run("stdio")
    finally:
        memory.close()
    return 0

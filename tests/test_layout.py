"""The house rules of the source tree, read from the code itself (issue 18): imports go one
way between the subsystems, no module imports itself back through others, and the product
loads the tools (the sample generator, the evaluation) only in the commands that run them.

Imports under ``if TYPE_CHECKING:`` are left out: they never run, so they cannot make an
import circle or pull a layer in at run time."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from helpers import REPO

#: The package's folders (the repository's root is the ``brainfs`` package).
FOLDERS = ("backend", "cache", "dream", "front", "fs", "tools")

#: What each part may import of ours (by dotted prefix under ``brainfs.``); a part may
#: always import itself. The direction of docs/ARCHITECTURE.md.
#: ``cache.layout`` names the memory tree's paths and imports nothing of ours: every part
#: may read it. ``front`` (the command line, the Python API, the MCP server, the demo) sits
#: on top; ``fs`` is the mount and never imports the front doors that start it.
ALLOWED = {
    "backend": (),
    "cache.layout": (),
    "cache.local": ("backend", "cache.layout"),
    "cache.facts": ("backend", "cache.layout"),
    "cache.search": ("backend", "cache.facts", "cache.layout"),
    "cache.context": ("backend", "cache.search", "cache.facts", "cache.layout"),
    "cache.sessions": ("backend", "cache.search", "cache.layout"),
    "cache": ("backend",),
    "dream": ("backend", "cache"),
    "fs": ("backend", "cache", "dream"),
    "front": ("backend", "cache", "dream", "fs", "tools"),
    "tools": ("backend", "cache", "dream", "fs.errors"),
}


def _modules() -> dict[str, Path]:
    mods: dict[str, Path] = {}
    for folder in FOLDERS:
        for path in sorted((REPO / folder).rglob("*.py")):
            rel = path.relative_to(REPO).with_suffix("")
            parts = list(rel.parts)
            if parts[-1] == "__init__":
                parts.pop()
            mods["brainfs." + ".".join(parts)] = path
    return mods


def _runtime_nodes(tree: ast.AST, *, at_import: bool = False) -> list[ast.AST]:
    """Every node outside ``if TYPE_CHECKING:`` blocks; with ``at_import``, only those that
    run when the module is imported (not the bodies of its functions)."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            skipped.update(id(n) for stmt in node.body for n in ast.walk(stmt))
        elif at_import and isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            body = node.body if isinstance(node.body, list) else [node.body]
            skipped.update(id(n) for stmt in body for n in ast.walk(stmt))
    return [n for n in ast.walk(tree) if id(n) not in skipped]


def import_graph(mods: dict[str, Path], *, at_import: bool = False) -> dict[str, set[str]]:
    """Module → the modules of ours it imports at run time (lazy imports included; with
    ``at_import``, only those its own import runs)."""
    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        base = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        deps: set[str] = set()
        for node in _runtime_nodes(ast.parse(path.read_text(), str(path)), at_import=at_import):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    pkg = base
                    for _ in range(node.level - 1):
                        pkg = pkg.rsplit(".", 1)[0]
                    target = f"{pkg}.{node.module}" if node.module else pkg
                else:
                    target = node.module or ""
                subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in mods]
                deps.update(subs or ([target] if target in mods else []))
            elif isinstance(node, ast.Import):
                deps.update(a.name for a in node.names if a.name in mods)
        deps.discard(name)
        graph[name] = deps
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def _part(module: str) -> str:
    """The most specific key of ALLOWED that ``module`` falls under."""
    rel = module.removeprefix("brainfs.")
    keys = [k for k in ALLOWED if rel == k or rel.startswith(k + ".")]
    return max(keys, key=len) if keys else ""


def _allowed(src: str, dst: str) -> bool:
    part = _part(src)
    rel = dst.removeprefix("brainfs.")
    if rel == part or rel.startswith(part + "."):
        return True
    return any(rel == a or rel.startswith(a + ".") for a in ALLOWED[part])


@pytest.fixture(scope="module")
def graph() -> dict[str, set[str]]:
    mods = _modules()
    assert len(mods) > 80, "the source tree was not found"
    return import_graph(mods)


def test_no_import_circles(graph: dict[str, set[str]]) -> None:
    assert cycles(graph) == []


def test_imports_go_one_way(graph: dict[str, set[str]]) -> None:
    upward = sorted(f"{src} -> {dst}" for src, deps in graph.items() for dst in deps
                    if src != "brainfs" and not _allowed(src, dst))
    assert upward == []


def test_the_checks_see_a_circle_and_an_upward_import() -> None:
    """The checks above would fail on a bad tree (so that they cannot pass vacuously)."""
    bad = {"brainfs.cache.search.a": {"brainfs.cache.search.b"},
           "brainfs.cache.search.b": {"brainfs.cache.search.a", "brainfs.cache.local.pack"},
           "brainfs.cache.local.pack": set()}
    assert cycles(bad) == [["brainfs.cache.search.a", "brainfs.cache.search.b"]]
    assert not _allowed("brainfs.cache.search.b", "brainfs.cache.local.pack")
    assert not _allowed("brainfs.backend.store", "brainfs.cache.local.pack")
    assert _allowed("brainfs.cache.context.assembly", "brainfs.cache.search.retrieval")
    assert _allowed("brainfs.fs.ops", "brainfs.cache.local.workingset")
    assert not _allowed("brainfs.fs.daemon", "brainfs.front.cli.options")
    assert not _allowed("brainfs.fs.daemon", "brainfs.tools.sample")
    assert _allowed("brainfs.front.cli.mounting", "brainfs.fs.daemon")
    assert _allowed("brainfs.front.cli.corpus", "brainfs.tools.sample")


def test_the_product_loads_the_tools_when_a_command_runs_them() -> None:
    """No module outside ``tools/`` imports the sample generator, the naive mount or the
    evaluation when it is itself imported (issue 32): ``brainfs sample``, ``mount --naive``
    and ``eval locomo`` import them inside the command."""
    mods = _modules()
    eager = sorted(f"{src} -> {dst}" for src, deps in import_graph(mods, at_import=True).items()
                   for dst in deps if not src.startswith("brainfs.tools")
                   and dst.startswith("brainfs.tools"))
    assert eager == []


def test_the_import_time_check_sees_an_eager_import(tmp_path: Path) -> None:
    (tmp_path / "eager.py").write_text("from brainfs.tools.sample import generate\n")
    (tmp_path / "lazy.py").write_text("def run():\n    from brainfs.tools.sample import generate\n")
    mods = {"brainfs.front.eager": tmp_path / "eager.py", "brainfs.front.lazy": tmp_path / "lazy.py",
            "brainfs.tools.sample": tmp_path / "eager.py"}
    assert import_graph(mods, at_import=True)["brainfs.front.eager"] == {"brainfs.tools.sample"}
    assert import_graph(mods, at_import=True)["brainfs.front.lazy"] == set()
    assert import_graph(mods)["brainfs.front.lazy"] == {"brainfs.tools.sample"}


#: The memory tree's paths as ``cache/layout.py`` names them: no other module spells them.
LAYOUT_LITERALS = frozenset({"knowledge/", "knowledge/INDEX.md", "knowledge/.facts.jsonl", "GUIDE.md",
                             "sessions/", "sessions/index.md", "notes/", "notes/corrections/",
                             "notes/learned/", "corrections/", "forget/"})

#: Modules that spell some of those paths themselves. ``backend/config.py`` names the files a
#: mount preloads by default (``GUIDE.md``, ``sessions/index.md``): the backend is the bottom
#: layer and imports nothing from the cache, so it cannot read them from ``cache/layout.py``.
SPELLED_OUT = frozenset({"backend/config.py"})


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
    return out


def spelled_paths(source: str) -> list[str]:
    """The layout's paths a module's code spells itself (docstrings and prose aside): a
    literal equal to one of them, an f-string that begins with ``knowledge/`` or
    ``sessions/``, a ``len("knowledge/")`` slice, the chunker's turn grammar by a private
    name."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            docs.update(id(v) for v in node.values)
            head = node.values[0] if node.values else None
            if isinstance(head, ast.Constant) and str(head.value).startswith(("knowledge/", "sessions/")):
                found.append(ast.unparse(node))
        elif isinstance(node, ast.ImportFrom) and any(a.name == "_TURN_RE" for a in node.names):
            found.append(f"{node.module}._TURN_RE")
    found += [repr(n.value) for n in ast.walk(tree) if isinstance(n, ast.Constant)
              and n.value in LAYOUT_LITERALS and id(n) not in docs]
    return found


def test_the_tree_layout_is_spelled_in_one_module() -> None:
    """``cache/layout.py`` names the memory tree's folders and files (issue 32): a module that
    needs ``knowledge/INDEX.md`` or a transcript's path takes it from there."""
    spelled = {}
    for folder in FOLDERS + ("benchmarks",):
        for path in sorted((REPO / folder).rglob("*.py")):
            rel = path.relative_to(REPO).as_posix()
            if rel != "cache/layout.py" and rel not in SPELLED_OUT:
                got = spelled_paths(path.read_text())
                if got:
                    spelled[rel] = got
    assert spelled == {}


def test_the_layout_check_sees_a_spelled_path() -> None:
    src = ('"""A page: knowledge/<slug>.md."""\n'
           'import re\nfrom brainfs.cache.search.chunker import _TURN_RE\n'
           'INDEX = "knowledge/INDEX.md"\n'
           'def page(slug):\n    """knowledge/ is the wiki."""\n    return f"knowledge/{slug}.md"\n'
           'def slug(p):\n    return p[len("knowledge/"):-3]\n'
           'HELP = "see knowledge/INDEX.md"\n')
    assert sorted(spelled_paths(src)) == sorted([
        "brainfs.cache.search.chunker._TURN_RE", "'knowledge/INDEX.md'", "f'knowledge/{slug}.md'",
        "'knowledge/'"])


def test_the_dream_package_loads_its_run_on_first_use() -> None:
    """``import brainfs.dream`` (or one of its modules) does not load the whole run, as the
    root package does not load the API; its names are there when asked for."""
    code = ("import sys, brainfs.dream as d\n"
            "print(sorted(m for m in sys.modules if m.startswith('brainfs.dream.')))\n"
            "from brainfs.dream import RunResult, correction_event, dream, run_local\n"
            "from brainfs.dream import core\n"
            "assert (RunResult, dream, run_local) == (core.RunResult, core.dream, core.run_local)\n"
            "assert correction_event is core.correction_event\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"

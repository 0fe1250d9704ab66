"""The wiki as a graph: pages linked by ``[[wikilinks]]`` (context edges) and to the
sessions their ``[cite:N]`` claims cite (evidence edges).

Drawn as a picture with matplotlib (PNG, SVG, PDF: nodes coloured by page type, a legend,
labels on a white ground, the best-connected pages labelled first) or as one interactive,
self-contained HTML page (Jinja2 template ``graph.html``: hover a page for its links and
citations, click a type in the legend to hide it, search by title). Sessions are left out
unless asked for: a page's citations then show as its size.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2
from brainfs.cache.layout import is_page, slug_of
from brainfs.cache.search.chunker import split_frontmatter
from brainfs.cache.search.citations import cited_sources

from .validate import LINK_RE

# networkx and matplotlib are the optional `graph` extra (pyproject.toml): the functions that
# draw import them, so that dream and `brainfs` run without them.

#: The formats ``render_graph`` writes, by the output file's suffix.
FORMATS = (".png", ".svg", ".pdf", ".html")

#: A colour per page type (dream's types, then the sample generator's); other types get
#: the next colour of :data:`_SPARE` in order of first appearance.
TYPE_COLORS = {
    "person": "#2563eb", "organization": "#ea580c", "place": "#16a34a", "project": "#9333ea",
    "pet": "#db2777", "topic": "#0891b2", "entity": "#2563eb", "concept": "#0891b2",
}
_SPARE = ("#ca8a04", "#4f46e5", "#65a30d", "#be123c", "#0f766e", "#a16207")
_UNTYPED = "#6b7280"
SESSION_COLOR = "#c4c7cc"
#: Past this many pages, the picture labels only the best-connected ones (the rest
#: would overlap into a grey smear); the HTML page shows every label on hover.
MAX_LABELS = 45


def wiki_graph(files: dict[str, str]):
    """A networkx DiGraph of ``knowledge/*.md`` pages (``kind=page``) and the sessions they
    cite (``kind=session``); edges have ``kind`` ``link`` or ``cite`` (weight = citations)."""
    import networkx as nx

    g = nx.DiGraph()
    pages = {p: t for p, t in files.items() if is_page(p)}
    for p, text in sorted(pages.items()):
        meta = split_frontmatter(text)[0] or {}
        slug = slug_of(p)
        g.add_node(slug, kind="page", title=str(meta.get("title") or slug), type=str(meta.get("type") or ""))
    for p, text in sorted(pages.items()):
        slug = slug_of(p)
        body = split_frontmatter(text)[1]
        for m in LINK_RE.finditer(body):
            tgt = m.group(1).strip()
            if tgt != slug:
                g.add_edge(slug, tgt, kind="link")
        for src in cited_sources(text):
            parts = src.split("/")
            node = f"session:{parts[1]}" if len(parts) > 2 and parts[0] == "sessions" else f"file:{src}"
            if node not in g:
                g.add_node(node, kind="session" if node.startswith("session:") else "file",
                           title=node.split(":", 1)[1])
            if g.has_edge(slug, node):
                g[slug][node]["weight"] += 1
            else:
                g.add_edge(slug, node, kind="cite", weight=1)
    return g


def type_colors(g) -> dict[str, str]:
    """The colour of every page type present in ``g`` ("" = untyped)."""
    out: dict[str, str] = {}
    spare = iter(_SPARE * 10)
    for _n, d in sorted(g.nodes(data=True)):
        if d.get("kind") != "page":
            continue
        t = d.get("type", "")
        if t not in out:
            out[t] = TYPE_COLORS.get(t) or (next(spare) if t else _UNTYPED)
    return out


def _view(files: dict[str, str], sessions: bool) -> tuple[Any, dict[str, Any], dict[str, int]]:
    """The graph to draw (without sessions unless asked), its layout, and counts."""
    import networkx as nx

    full = wiki_graph(files)
    cites = {n: sum(d.get("weight", 1) for _a, _b, d in full.out_edges(n, data=True) if d["kind"] == "cite")
             for n, d in full.nodes(data=True) if d.get("kind") == "page"}
    counts = {"pages": len(cites),
              "links": sum(1 for a, b, d in full.edges(data=True) if d["kind"] == "link" and b in cites),
              "cite_edges": sum(1 for _a, _b, d in full.edges(data=True) if d["kind"] == "cite"),
              "sessions": sum(1 for _n, d in full.nodes(data=True) if d.get("kind") == "session")}
    g = full.copy()
    # A link to a page that does not exist draws nothing (validation reports it).
    g.remove_nodes_from([n for n, d in full.nodes(data=True) if "kind" not in d])
    if not sessions:
        g.remove_nodes_from([n for n, d in full.nodes(data=True) if d.get("kind") in ("session", "file")])
    for n in g.nodes:
        g.nodes[n]["cites"] = cites.get(n, 0)
    counts["nodes"] = g.number_of_nodes()
    n = max(1, g.number_of_nodes())
    # Spread wider than the default (k = 1/sqrt(n)) so labels have room; seeded: the same
    # wiki draws the same picture.
    if not g.number_of_nodes():
        return g, {}, counts
    und = g.to_undirected()
    if n <= 400:
        # Kamada-Kawai spreads a small graph evenly (room for labels); seeded by a spring
        # layout so that the same wiki draws the same picture.
        start = nx.spring_layout(und, seed=7)
        pos = nx.kamada_kawai_layout(und, pos=start) if nx.is_connected(und) else _components(und, start)
    else:
        pos = nx.spring_layout(und, seed=7, k=2.2 / n ** 0.5, iterations=150)
    return g, pos, counts


def _components(und, start: dict) -> dict:
    """Kamada-Kawai per connected component, the components side by side by size (an
    unconnected graph has no single distance matrix)."""
    import networkx as nx

    pos: dict = {}
    x = 0.0
    comps = sorted(nx.connected_components(und), key=len, reverse=True)
    for comp in comps:
        sub = und.subgraph(comp)
        width = max(0.15, (len(comp) / max(1, und.number_of_nodes())) ** 0.5 * 2)
        local = nx.kamada_kawai_layout(sub, pos={v: start[v] for v in comp}, scale=width / 2) \
            if len(comp) > 2 else {v: (i * 0.1, 0.0) for i, v in enumerate(sorted(comp))}
        for v, (px, py) in local.items():
            pos[v] = (px + x + width / 2, py)
        x += width + 0.1
    return pos


def _labelled(g) -> set[str]:
    pages = sorted((n for n, d in g.nodes(data=True) if d.get("kind") == "page"),
                   key=lambda n: (-g.degree(n), n))
    return set(pages[:MAX_LABELS])


def render_graph(files: dict[str, str], out: Path, title: str = "brainfs knowledge wiki",
                 sessions: bool = False) -> dict:
    """Draw the graph to ``out`` (PNG, SVG, PDF or interactive HTML, by suffix); returns
    counts (pages, links, cite_edges, sessions, nodes drawn)."""
    suffix = out.suffix.lower()
    if suffix not in FORMATS:
        raise ValueError(f"{out}: the graph is written as {', '.join(FORMATS)} (by the file's suffix)")
    g, pos, counts = _view(files, sessions)
    out.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".html":
        out.write_text(_html(g, pos, counts, title), encoding="utf-8")
    else:
        _picture(g, pos, counts, title, out)
    return counts


def _caption(counts: dict[str, int], sessions: bool) -> str:
    return (f"{counts['pages']} pages, {counts['links']} links, {counts['cite_edges']} page→session "
            f"citation edges" + ("" if sessions else " (sessions hidden; size = citations)"))


def _picture(g, pos: dict, counts: dict[str, int], title: str, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import networkx as nx
    from matplotlib.lines import Line2D

    colors = type_colors(g)
    pages = [n for n, d in g.nodes(data=True) if d.get("kind") == "page"]
    others = [n for n in g.nodes if n not in pages]
    links = [(a, b) for a, b, d in g.edges(data=True) if d["kind"] == "link"]
    cites = [(a, b) for a, b, d in g.edges(data=True) if d["kind"] == "cite"]
    size = max(8.0, min(28.0, 3.0 + 1.1 * g.number_of_nodes() ** 0.5))
    fig, ax = plt.subplots(figsize=(size, size * 0.8))
    nx.draw_networkx_edges(g, pos, edgelist=cites, ax=ax, edge_color="#d9dbe0", arrows=False, width=0.5)
    nx.draw_networkx_edges(g, pos, edgelist=links, ax=ax, edge_color="#7b8794", width=0.9, alpha=0.7,
                           arrows=True, arrowsize=7, node_size=200)
    nx.draw_networkx_nodes(g, pos, nodelist=others, ax=ax, node_color=SESSION_COLOR, node_size=14)
    nx.draw_networkx_nodes(g, pos, nodelist=pages, ax=ax, linewidths=0.8, edgecolors="#ffffff",
                           node_color=[colors[g.nodes[n]["type"]] for n in pages],
                           node_size=[70 + 18 * min(40, g.nodes[n]["cites"]) + 25 * g.degree(n) for n in pages])
    shown = _place_labels(ax, fig, g, pos, _labelled(g))
    handles = [Line2D([], [], marker="o", ls="", markersize=8, markerfacecolor=c, markeredgecolor="white",
                      label=f"{t or 'untyped'} ({sum(1 for n in pages if g.nodes[n]['type'] == t)})")
               for t, c in sorted(colors.items())]
    handles.append(Line2D([], [], color="#7b8794", label="[[link]] between pages"))
    if others:
        handles.append(Line2D([], [], marker="o", ls="", markersize=5, markerfacecolor=SESSION_COLOR,
                              markeredgecolor=SESSION_COLOR, label="session cited"))
        handles.append(Line2D([], [], color="#d9dbe0", label="citation"))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.0, 1.0), frameon=False, fontsize=9,
              title="page type", title_fontsize=10)
    note = "" if len(shown) == len(pages) else f"; {len(shown)} of {len(pages)} pages labelled (the rest in the .html page)"
    ax.set_title(f"{title}\n{_caption(counts, bool(others))}{note}", fontsize=11)
    ax.axis("off")
    fig.savefig(out, dpi=110, bbox_inches="tight")
    plt.close(fig)


def _place_labels(ax, fig, g, pos: dict, wanted: set[str]) -> set[str]:
    """Label pages best-connected first, each at the first of four places beside its node
    where it overlaps no label placed before; a page with no free place stays unlabelled
    (the HTML page shows every title). Returns the pages labelled."""
    ax.autoscale_view()
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    taken: list = []
    placed: set[str] = set()
    order = sorted(wanted, key=lambda n: (-g.degree(n), n))
    for n in order:
        size = 9.5 if g.degree(n) >= 6 else 8
        for dx, dy, ha, va in ((0, 7, "center", "bottom"), (0, -7, "center", "top"),
                               (8, 0, "left", "center"), (-8, 0, "right", "center")):
            t = ax.annotate(g.nodes[n]["title"], pos[n], xytext=(dx, dy), textcoords="offset points",
                            ha=ha, va=va, fontsize=size, zorder=5,
                            bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.85})
            box = t.get_window_extent(renderer).expanded(1.05, 1.1)
            if not any(box.overlaps(b) for b in taken):
                taken.append(box)
                placed.add(n)
                break
            t.remove()
    return placed


def _html(g, pos: dict, counts: dict[str, int], title: str) -> str:
    colors = type_colors(g)
    w, h, pad = 1200.0, 900.0, 60.0
    xs = [p[0] for p in pos.values()] or [0.0]
    ys = [p[1] for p in pos.values()] or [0.0]
    x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)

    def sx(v: float) -> float:
        return round(pad + (v - x0) / ((x1 - x0) or 1) * (w - 2 * pad), 1)

    def sy(v: float) -> float:
        return round(pad + (y1 - v) / ((y1 - y0) or 1) * (h - 2 * pad), 1)

    shown = _labelled(g)
    nodes = []
    for n, d in sorted(g.nodes(data=True)):
        page = d.get("kind") == "page"
        nodes.append({
            "id": n, "title": d.get("title", n), "kind": d.get("kind"), "type": d.get("type", "") if page else "",
            "x": sx(pos[n][0]), "y": sy(pos[n][1]),
            "r": round(5 + min(14, 0.6 * d.get("cites", 0) + 1.2 * g.degree(n)), 1) if page else 3,
            "color": colors.get(d.get("type", ""), _UNTYPED) if page else SESSION_COLOR,
            "label": page and n in shown, "cites": d.get("cites", 0),
            "links_out": sorted(b for _a, b, e in g.out_edges(n, data=True) if e["kind"] == "link"),
            "links_in": sorted(a for a, _b, e in g.in_edges(n, data=True) if e["kind"] == "link"),
        })
    edges = [{"a": a, "b": b, "kind": d["kind"], "x1": sx(pos[a][0]), "y1": sy(pos[a][1]),
              "x2": sx(pos[b][0]), "y2": sy(pos[b][1])} for a, b, d in sorted(g.edges(data=True))]
    legend = [{"type": t, "label": t or "untyped", "color": c,
               "count": sum(1 for n in nodes if n["kind"] == "page" and n["type"] == t)}
              for t, c in sorted(colors.items())]
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(Path(__file__).parent), autoescape=True,
                             trim_blocks=True, lstrip_blocks=True, undefined=jinja2.StrictUndefined)
    return env.get_template("graph.html").render(
        title=title, caption=_caption(counts, any(n["kind"] != "page" for n in nodes)),
        nodes=nodes, edges=edges, legend=legend, width=int(w), height=int(h),
        session_color=SESSION_COLOR)

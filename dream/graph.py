"""The wiki as a graph: pages linked by ``[[wikilinks]]`` (context edges) and to the
sessions their ``[cite:N]`` claims cite (evidence edges); rendered with matplotlib."""

from __future__ import annotations

from pathlib import Path

from brainfs.cache.chunker import split_frontmatter
from brainfs.cache.retrieval import cited_sources

from .validate import INDEX_PATH, LINK_RE


def wiki_graph(files: dict[str, str]):
    """A networkx DiGraph of ``knowledge/*.md`` pages (``kind=page``) and the sessions they
    cite (``kind=session``); edges have ``kind`` ``link`` or ``cite`` (weight = citations)."""
    import networkx as nx

    g = nx.DiGraph()
    pages = {p: t for p, t in files.items() if p.startswith("knowledge/") and p.endswith(".md")
             and p != INDEX_PATH}
    for p, text in sorted(pages.items()):
        meta = split_frontmatter(text)[0] or {}
        slug = p[len("knowledge/"):-3]
        g.add_node(slug, kind="page", title=str(meta.get("title") or slug), type=str(meta.get("type") or ""))
    for p, text in sorted(pages.items()):
        slug = p[len("knowledge/"):-3]
        body = split_frontmatter(text)[1]
        for m in LINK_RE.finditer(body):
            tgt = m.group(1).strip()
            if tgt != slug:
                g.add_edge(slug, tgt, kind="link")
        for src in cited_sources(text):
            parts = src.split("/")
            node = f"session:{parts[1]}" if len(parts) > 2 and parts[0] == "sessions" else f"file:{src}"
            if node not in g:
                g.add_node(node, kind="session" if node.startswith("session:") else "file")
            if g.has_edge(slug, node):
                g[slug][node]["weight"] += 1
            else:
                g.add_edge(slug, node, kind="cite", weight=1)
    return g


def render_graph(files: dict[str, str], out: Path, title: str = "brainfs knowledge wiki") -> dict:
    """Draw the graph to ``out`` (PNG/SVG by suffix); returns counts."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import networkx as nx

    g = wiki_graph(files)
    n_pages = sum(1 for _n, d in g.nodes(data=True) if d.get("kind") == "page")
    size = max(6.0, min(30.0, 2.0 + 0.35 * g.number_of_nodes() ** 0.5 * 3))
    fig, ax = plt.subplots(figsize=(size, size))
    pos = nx.spring_layout(g, seed=7, k=None) if g.number_of_nodes() else {}
    pages = [n for n, d in g.nodes(data=True) if d.get("kind") == "page"]
    others = [n for n in g.nodes if n not in pages]
    links = [(a, b) for a, b, d in g.edges(data=True) if d["kind"] == "link" and b in g]
    cites = [(a, b) for a, b, d in g.edges(data=True) if d["kind"] == "cite"]
    nx.draw_networkx_edges(g, pos, edgelist=cites, ax=ax, edge_color="#bbbbbb", arrows=False, width=0.6)
    nx.draw_networkx_edges(g, pos, edgelist=links, ax=ax, edge_color="#1f77b4", width=1.2,
                           arrows=True, arrowsize=8)
    nx.draw_networkx_nodes(g, pos, nodelist=others, ax=ax, node_color="#cccccc", node_size=30)
    nx.draw_networkx_nodes(g, pos, nodelist=pages, ax=ax, node_color="#ff7f0e",
                           node_size=[120 + 40 * g.out_degree(n) for n in pages])
    nx.draw_networkx_labels(g, pos, labels={n: g.nodes[n]["title"] for n in pages}, ax=ax, font_size=8)
    ax.set_title(f"{title}: {n_pages} pages, {len(links)} links, {len(cites)} page→session citation edges")
    ax.axis("off")
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return {"pages": n_pages, "links": len(links), "cite_edges": len(cites), "nodes": g.number_of_nodes()}

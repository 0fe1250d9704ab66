"""The pages the command line draws (issue 15): ``brainfs graph`` (typed colours, a legend,
SVG, PNG and an interactive HTML page, sessions optional) and ``brainfs context --html``
(admitted text visible, lane and status filters, sources linked, a human timestamp). Real
S3 server on loopback; the HTML pages are also loaded in headless Chromium, whose DOM after
the page's own script ran is checked."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from brainfs.backend.config import Config
from brainfs.backend.keys import CorpusURL
from brainfs.backend.store import ObjectStore

from helpers import CLI_TREE, one_error_line, upload_tree, write_tree

pytestmark = pytest.mark.s3

CLI = [sys.executable, "-m", "brainfs.front.cli"]


def _page(title: str, kind: str, body: str, sources: list[str]) -> str:
    src = "".join(f"  - {s}\n" for s in sources)
    return f"---\ntitle: {title}\ntype: {kind}\nupdated: 2026-05-01\nsources:\n{src}---\n# {title}\n\n{body}\n"


WIKI = {
    "knowledge/INDEX.md": "- [[mara-lind]] Mara Lind\n",
    "knowledge/mara-lind.md": _page("Mara Lind", "person", "Mara Lind works at [[sora-city-lab]] [cite:1]. "
                                    "She met [[ana-ruiz]] in [[kyoto]] [cite:2].",
                                    ["sessions/2026-05-01-kyoto/transcript.md#D1:1",
                                     "sessions/2026-05-02-lab/transcript.md#D2:3"]),
    "knowledge/ana-ruiz.md": _page("Ana Ruiz", "person", "Ana Ruiz works at [[sora-city-lab]] [cite:1].",
                                   ["sessions/2026-05-02-lab/transcript.md#D2:4"]),
    "knowledge/sora-city-lab.md": _page("Sora City Lab", "organization", "A lab in [[kyoto]] [cite:1].",
                                        ["sessions/2026-05-02-lab/transcript.md#D2:5"]),
    "knowledge/kyoto.md": _page("Kyoto", "place", "A city [cite:1].", ["sessions/2026-05-01-kyoto/transcript.md#D1:2"]),
    "knowledge/biscuit.md": _page("Biscuit", "pet", "Mara's dog [cite:1].", ["sessions/2026-05-01-kyoto/transcript.md#D1:3"]),
}
COLORS = {"person": "#2563eb", "organization": "#ea580c", "place": "#16a34a", "pet": "#db2777"}


@pytest.fixture
def env(tmp_path: Path, cfg: Config) -> dict[str, str]:
    e = dict(os.environ, AWS_ENDPOINT_URL=cfg.endpoint_url or "", BRAINFS_CONFIG="/dev/null",
             BRAINFS_CACHE_DIR=str(tmp_path / "cache"), BRAINFS_EMBEDDER="none",
             BRAINFS_GLOBAL_GUIDE=str(tmp_path / "no-global-guide.md"))
    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE"):
        e.pop(k, None)
    return e


def cli(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], env=env, capture_output=True, text=True, timeout=180)


def _chromium_dom(page: Path, tmp_path: Path, fragment: str = "", png: Path | None = None) -> str:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        pytest.skip("chromium is not installed (.ci/setup installs it)")
    base = [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            f"--user-data-dir={tmp_path / 'chromium-profile'}", "--window-size=1400,1000"]
    url = page.as_uri() + fragment
    if png is not None:
        subprocess.run([*base, f"--screenshot={png}", url], check=True, timeout=120, capture_output=True)
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000
    return subprocess.run([*base, "--virtual-time-budget=2000", "--dump-dom", url], check=True,
                          timeout=120, capture_output=True, text=True).stdout


def _self_contained(text: str) -> None:
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text), "external resource"
    assert "@import" not in text and "url(" not in text


def test_graph_picture_and_page(tmp_path: Path, env, corpus: CorpusURL, store: ObjectStore) -> None:
    upload_tree(store, write_tree(tmp_path / "wiki", WIKI))
    # The picture: SVG with a legend naming each type and its count, the sessions optional.
    svg = tmp_path / "g.svg"
    r = cli("graph", str(corpus), "--out", str(svg), env=env)
    assert r.returncode == 0, r.stderr
    assert "5 pages" in r.stdout and "sessions hidden" in r.stdout
    text = svg.read_text()
    ET.fromstring(text)  # well-formed SVG
    for legend in ("person (2)", "organization (1)", "place (1)", "pet (1)"):
        assert legend in text, legend
    assert "Mara Lind" in text and "Sora City Lab" in text
    for color in COLORS.values():
        assert f"fill: {color}" in text or f"fill:{color}" in text, color
    r = cli("graph", str(corpus), "--out", str(tmp_path / "s.svg"), "--sessions", env=env)
    assert r.returncode == 0 and "2 sessions" in r.stdout
    assert "session cited" in (tmp_path / "s.svg").read_text()
    png = tmp_path / "g.png"
    assert cli("graph", str(corpus), "--out", str(png), env=env).returncode == 0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "--out" in one_error_line(cli("graph", str(corpus), "--out", str(tmp_path / "g.txt"), env=env))

    # The interactive page: one node per page in its type's colour, legend, no fetches.
    page = tmp_path / "g.html"
    r = cli("graph", str(corpus), "--out", str(page), env=env)
    assert r.returncode == 0, r.stderr
    html = page.read_text()
    _self_contained(html)
    nodes = dict(re.findall(r'<g class="node page" data-id="([^"]+)" data-type="([^"]*)">', html))
    assert nodes == {"mara-lind": "person", "ana-ruiz": "person", "sora-city-lab": "organization",
                     "kyoto": "place", "biscuit": "pet"}
    for slug, kind in nodes.items():
        assert re.search(rf'data-id="{slug}".*?fill="{COLORS[kind]}"', html, re.S)
    dom = _chromium_dom(page, tmp_path, "#focus=mara-lind", png=tmp_path / "graph-page.png")
    info = re.search(r'<div class="panel" id="info">(.*?)</div>\s*</div>', dom, re.S).group(1)
    assert "Mara Lind" in info and "Sora City Lab" in info and "Ana Ruiz" in info and "2 citations" in info
    # Focusing Mara dims the pages she has no link with.
    assert re.search(r'class="node page dim" data-id="biscuit"', dom)
    assert not re.search(r'class="node page dim" data-id="ana-ruiz"', dom)


def test_context_page(tmp_path: Path, env, cfg: Config, corpus: CorpusURL, store: ObjectStore) -> None:
    from brainfs.cache.local.pack import build_pack
    from brainfs.cache.search.localindex import build_index

    upload_tree(store, write_tree(tmp_path / "src", CLI_TREE))
    build_index(store, tmp_path / "ix.sqlite", None)
    build_pack(store, cfg)
    page = tmp_path / "context.html"
    r = cli("context", "plan the Kyoto trip", str(corpus), "--budget", "160", "--reserve", "0", "--html", str(page), env=env)
    assert r.returncode == 0, r.stderr
    html = page.read_text()
    _self_contained(html)
    rows = re.findall(r'<tr class="item ([a-z]+)" data-lane="([a-z]+)".*?</tr>', html, re.S)
    assert rows and {s for s, _ in rows} >= {"admitted", "skipped"}
    for row in re.findall(r'<tr class="item (?:admitted|truncated)".*?</tr>', html, re.S):
        # Admitted text is on the page, not behind a disclosure.
        assert '<pre class="text">' in row and "<details>" not in row
    for row in re.findall(r'<tr class="item skipped".*?</tr>', html, re.S):
        assert "<details><summary>text (not sent)</summary>" in row
    assert "Mara met Sora City Lab in Kyoto" in html
    # Sources link to their object; the time is a human one (no microseconds).
    assert f'href="{corpus}/notes/travel/kyoto.md"' in html
    stamp = re.search(r"<b>assembled</b><span>(.*?)</span>", html).group(1)
    assert re.fullmatch(r"\d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d UTC in \d+ ms", stamp), stamp

    # In Chromium: the lane filter (from the address's fragment) hides the other lanes'
    # rows and the skipped ones; without it every row shows.
    lanes = {lane for _s, lane in rows}
    assert len(lanes) >= 2
    keep = "guide"
    dom = _chromium_dom(page, tmp_path, f"#lanes={keep}&skipped=0", png=tmp_path / "context.png")
    shown = re.findall(r'<tr class="item ([a-z]+)" data-lane="([a-z]+)"[^>]*?id="item-\d+"[^>]*?(style="display: none;")?>', dom)
    assert len(shown) == len(rows)
    visible = [(s, lane) for s, lane, hidden in shown if not hidden]
    assert visible and all(lane == keep and s != "skipped" for s, lane in visible)
    m = re.search(r'id="shown">(\d+) of (\d+) items<', dom)
    assert m and int(m.group(1)) == len(visible) and int(m.group(2)) == len(rows)
    dom = _chromium_dom(page, tmp_path)
    assert "display: none" not in dom

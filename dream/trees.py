"""The memory trees dream reads: anything with ``paths()`` (every path with its ETag) and
``read()`` — a local directory (:class:`LocalTree`), files held in memory (:class:`DictTree`),
the S3 corpus (:mod:`brainfs.dream.sync`)."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from .text import md5_hex


class Tree(Protocol):
    """A memory tree dream reads: every path with its ETag (MD5 of the content), and text."""

    def paths(self) -> dict[str, str]: ...

    def read(self, path: str) -> str | None: ...


class LocalTree:
    """A memory tree in a local directory (hidden VCS folders skipped)."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)
        self._paths: dict[str, str] | None = None

    def paths(self) -> dict[str, str]:
        if self._paths is None:
            out = {}
            for p in sorted(self.root.rglob("*")):
                if p.is_file() and ".git" not in p.relative_to(self.root).parts:
                    out[p.relative_to(self.root).as_posix()] = md5_hex(p.read_bytes())
            self._paths = out
        return self._paths

    def read(self, path: str) -> str | None:
        p = self.root / path
        try:
            return p.read_bytes().decode("utf-8", errors="replace")
        except OSError:
            return None


class DictTree:
    """A memory tree held in memory (``path → text``)."""

    def __init__(self, files: dict[str, str]) -> None:
        self.files = files

    def paths(self) -> dict[str, str]:
        return {p: md5_hex(t) for p, t in self.files.items()}

    def read(self, path: str) -> str | None:
        return self.files.get(path)


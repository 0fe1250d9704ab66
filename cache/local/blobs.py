"""Local content files of the working set, written atomically and verified by hash.

A corpus path's content lives at ``data/<xxh3-128 of the path>``: a flat, fixed-length
name, so hostile or very long corpus names never reach the local filesystem. Writes go to a
unique temp file in ``tmp/``, are fsynced, then renamed into place; a crash leaves at worst a
temp file, which :meth:`Blobs.sweep` removes at the next start.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import xxhash

#: Bumped when the on-disk layout changes, so an old cache is never misread.
FORMAT_VERSION = 1


def content_hash(data: bytes) -> str:
    """The hash the catalog keeps for a file's content."""
    return xxhash.xxh3_128_hexdigest(data)


def file_hash(path: Path) -> str:
    """Hash of a file's content, streamed."""
    h = xxhash.xxh3_128()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


class Blobs:
    """The ``data/`` and ``tmp/`` directories of a cache."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.data = root / f"data-v{FORMAT_VERSION}"
        self.tmp = root / "tmp"
        self.data.mkdir(parents=True, exist_ok=True)
        self.tmp.mkdir(parents=True, exist_ok=True)

    def name(self, path: str) -> str:
        """Blob file name of a corpus path."""
        return xxhash.xxh3_128_hexdigest(path.encode("utf-8", "surrogatepass"))

    def location(self, path: str) -> Path:
        """Where the content of ``path`` lives (whether or not it exists yet)."""
        return self.data / self.name(path)

    def stage(self, data: bytes, durable: bool = True) -> tuple[str, str]:
        """Write ``data`` to a new temp file; returns (temp path, hash).

        :meth:`install` then puts it in place, after the caller has checked (on its own
        thread) that nothing newer was written meanwhile. ``durable=False`` skips the fsync:
        right for a clean copy of a remote object, which the start-up check re-hashes and
        refetches if a power loss tore it (an fsync per file made a 2,000-file preload
        take seconds).
        """
        fd, tmp = tempfile.mkstemp(dir=self.tmp, prefix="fetch-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                if durable:
                    f.flush()
                    os.fsync(f.fileno())
        except BaseException:
            _unlink(tmp)
            raise
        return tmp, content_hash(data)

    def install(self, path: str, tmp: str) -> None:
        """Make a staged temp file the content of ``path`` (one atomic rename)."""
        os.replace(tmp, self.location(path))

    def discard(self, tmp: str) -> None:
        """Drop a staged temp file that lost to a newer write."""
        _unlink(tmp)

    def write(self, path: str, data: bytes) -> str:
        """Store ``data`` for ``path`` atomically; returns its hash."""
        tmp, digest = self.stage(data)
        self.install(path, tmp)
        return digest

    def new_shadow(self, path: str, copy_current: bool) -> str:
        """A private temp file to write a new version of ``path`` into, starting as a copy
        of the current content (``copy_current``; FileNotFoundError if there is none) or
        empty. Readers keep seeing the committed version until :meth:`commit_shadow`.
        """
        fd, tmp = tempfile.mkstemp(dir=self.tmp, prefix="write-")
        os.close(fd)
        if copy_current:
            # A missing copy must fail the write: a shadow that starts empty would commit
            # the file without its old bytes (an append would truncate it).
            try:
                shutil.copyfile(self.location(path), tmp)
            except BaseException:
                os.unlink(tmp)
                raise
        return tmp

    def seal_shadow(self, shadow: str) -> tuple[int, str]:
        """fsync a written shadow and hash it (blocking); returns (size, hash).

        The shadow stays in ``tmp/`` until :meth:`install_shadow`: the catalog records the
        new hash first, so a crash in between leaves a sealed shadow that the start-up
        check recognises by its hash and installs."""
        fd = os.open(shadow, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
        return os.path.getsize(shadow), file_hash(Path(shadow))

    def install_shadow(self, path: str, shadow: str) -> None:
        """Make a sealed shadow the content of ``path`` (one rename)."""
        os.replace(shadow, self.location(path))

    def sync_dir(self) -> None:
        """fsync the data directory, so renames into it survive a power loss."""
        dfd = os.open(self.data, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)

    def commit_shadow(self, path: str, shadow: str) -> tuple[int, str]:
        """Seal and install in one step (for callers with no catalog to update first)."""
        size, digest = self.seal_shadow(shadow)
        self.install_shadow(path, shadow)
        self.sync_dir()
        return size, digest

    def sealed_shadows(self) -> dict[str, Path]:
        """Hash -> temp file, for every shadow left in ``tmp/`` (start-up check only)."""
        out: dict[str, Path] = {}
        for p in self.tmp.iterdir():
            if p.name.startswith("write-"):
                try:
                    out[file_hash(p)] = p
                except OSError:
                    pass
        return out

    def orphans(self, wanted: set[str]) -> dict[str, Path]:
        """Hash -> blob file, for every blob whose name is not in ``wanted`` (start-up
        check only: what a rename interrupted after its catalog commit left behind)."""
        out: dict[str, Path] = {}
        for p in self.data.iterdir():
            if p.name not in wanted:
                try:
                    out[file_hash(p)] = p
                except OSError:
                    pass
        return out

    def adopt(self, path: str, src: Path, keep: bool = False) -> None:
        """Make the file ``src`` the content of ``path``: moved, or copied when ``keep``
        (another row needs the same bytes)."""
        if keep:
            tmp, _ = self.stage(src.read_bytes())
            self.install(path, tmp)
        else:
            os.replace(src, self.location(path))

    def keep(self, path: str) -> str | None:
        """A second name in ``tmp/`` for the content of ``path`` (a hard link: no copy),
        so it outlives the file's removal; None when there is no content."""
        return self.keep_file(str(self.location(path)))

    def keep_file(self, src: str) -> str | None:
        """A second name in ``tmp/`` for the file ``src`` (a shadow, or a blob)."""
        fd, tmp = tempfile.mkstemp(dir=self.tmp, prefix="unlinked-")
        os.close(fd)
        os.unlink(tmp)
        try:
            os.link(src, tmp)
        except OSError:
            return None
        return tmp

    def move(self, src_path: str, dst_path: str) -> None:
        """Give ``dst_path`` the content of ``src_path`` (one rename; used by rename)."""
        os.replace(self.location(src_path), self.location(dst_path))

    def copy_as(self, src_path: str, dst_path: str) -> None:
        """Give ``dst_path`` the same content as ``src_path`` (used by rename)."""
        os.replace(self.location(src_path), self.location(dst_path))

    def remove(self, path: str) -> None:
        """Drop the local content of ``path`` (no error if absent)."""
        _unlink(str(self.location(path)))

    def verify(self, path: str, expected_hash: str, expected_size: int | None = None) -> bool:
        """True when the stored content exists and hashes to ``expected_hash``."""
        loc = self.location(path)
        try:
            if expected_size is not None and loc.stat().st_size != expected_size:
                return False
            return file_hash(loc) == expected_hash
        except FileNotFoundError:
            return False

    def sweep(self) -> int:
        """Remove temp files left by a crash; returns how many."""
        n = 0
        for p in self.tmp.iterdir():
            _unlink(str(p))
            n += 1
        return n

    def names(self) -> set[str]:
        """Every blob file name present."""
        return {p.name for p in self.data.iterdir()}

    def usage(self) -> int:
        """Bytes used by committed blobs."""
        return sum(p.stat().st_size for p in self.data.iterdir())


def _unlink(p: str) -> None:
    try:
        os.unlink(p)
    except FileNotFoundError:
        pass

"""Log output of every brainfs command and of the mount daemon.

Lines are for people and for ``grep``: ``TIME LEVEL LOGGER: message``, where a mapping
passed as a logging argument (``log.info("ready: %s", timings)``) is written as
``key=value`` pairs, never as a Python dict repr. ``--log-format json`` writes one JSON
object per line instead, the mapping's items as fields of their own.

The daemon's log file is rotated (:class:`logging.handlers.RotatingFileHandler`): a mount
that runs for months keeps at most ``log_max_bytes * (log_backups + 1)`` bytes of log.
"""

from __future__ import annotations

import json
import logging
import logging.handlers
import math
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: Loggers of libraries that are chatty at DEBUG and say nothing a brainfs user acts on;
#: botocore's DEBUG output also carries request headers, so it stays at WARNING even in
#: ``-vv`` unless asked for by name (``-vvv``).
NOISY = ("botocore", "boto3", "urllib3", "s3transfer", "git", "filelock", "httpx", "httpcore")


def _value(v: Any) -> str:
    if isinstance(v, bool) or v is None:
        return str(v).lower()
    if isinstance(v, float):
        if math.isfinite(v):
            return f"{round(v, 3):g}" if abs(v) < 1e6 else str(int(v))
        return str(v)
    if isinstance(v, (int,)):
        return str(v)
    if isinstance(v, (list, tuple, set, frozenset)) and all(isinstance(x, (str, int, float)) for x in v):
        s = ",".join(str(x) for x in v)
    else:
        s = v if isinstance(v, str) else json.dumps(v, default=str, ensure_ascii=False)
    if not s or any(c in s for c in ' ="\n\t'):
        return json.dumps(s, ensure_ascii=False)
    return s


def kv(mapping: Mapping) -> str:
    """``{"a": 1, "b": 0.00671}`` → ``a=1 b=0.007``."""
    return " ".join(f"{k}={_value(v)}" for k, v in mapping.items())


def _plain(record: logging.LogRecord) -> tuple[logging.LogRecord, dict[str, Any]]:
    """A copy of ``record`` whose mapping arguments are rendered as key=value, and the
    fields those mappings held (for the JSON form)."""
    fields: dict[str, Any] = {}
    args = record.args
    if isinstance(args, Mapping) and "%(" not in str(record.msg):
        fields.update(args)
        args = (kv(args),)
    elif isinstance(args, tuple) and any(isinstance(a, Mapping) for a in args):
        for a in args:
            if isinstance(a, Mapping):
                fields.update(a)
        args = tuple(kv(a) if isinstance(a, Mapping) else a for a in args)
    else:
        return record, fields
    copy = logging.makeLogRecord(record.__dict__)
    copy.args = args
    return copy, fields


class PlainFormatter(logging.Formatter):
    """``2026-11-30T19:40:29.123 INFO brainfs.mount: ready: check_s=0.007 list_s=0.012``."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s.%(msecs)03d %(levelname)s %(name)s: %(message)s",
                         datefmt="%Y-%m-%dT%H:%M:%S")

    def format(self, record: logging.LogRecord) -> str:
        return super().format(_plain(record)[0])


class JSONFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, and the mapping's fields."""

    def format(self, record: logging.LogRecord) -> str:
        rec, fields = _plain(record)
        out: dict[str, Any] = {
            "time": self.formatTime(rec, "%Y-%m-%dT%H:%M:%S") + f".{int(rec.msecs):03d}",
            "level": rec.levelname.lower(),
            "logger": rec.name,
            "msg": rec.getMessage(),
        }
        for k, v in fields.items():
            out.setdefault(str(k), v)
        if rec.exc_info:
            out["exc"] = self.formatException(rec.exc_info)
        return json.dumps(out, default=str, ensure_ascii=False)


class StderrHandler(logging.StreamHandler):
    """Writes to whatever ``sys.stderr`` is at the time of each record (as logging's own
    last-resort handler does), so a handler set up by one in-process ``main()`` call never
    writes to a stream that was replaced and closed since (pytest's capture)."""

    def __init__(self) -> None:
        logging.Handler.__init__(self)

    @property
    def stream(self):  # type: ignore[override]
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:
        pass


def level_for(verbosity: int) -> int:
    """-q → ERROR, default → WARNING for commands, -v → DEBUG (INFO for ``0`` on a mount:
    see :func:`setup`)."""
    if verbosity < 0:
        return logging.ERROR
    if verbosity == 0:
        return logging.WARNING
    return logging.DEBUG


def setup(verbosity: int = 0, fmt: str = "text", log_file: Path | None = None,
          max_bytes: int = 1024**2, backups: int = 3, default: int = logging.WARNING) -> None:
    """Configure the root logger once: to ``log_file`` (rotated) or stderr.

    ``verbosity`` is the count of ``-v`` minus the count of ``-q``: below 0 only errors,
    0 the command's ``default`` level, 1 or more DEBUG (3 or more lets the noisy libraries
    talk too).
    """
    level = default if verbosity == 0 else level_for(verbosity)
    if log_file is not None:
        log_file.parent.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = logging.handlers.RotatingFileHandler(
            log_file, maxBytes=max_bytes, backupCount=backups, encoding="utf-8")
    else:
        handler = StderrHandler()
    handler.setFormatter(JSONFormatter() if fmt == "json" else PlainFormatter())
    handler._brainfs = True  # type: ignore[attr-defined]
    root = logging.getLogger()
    for h in list(root.handlers):
        # Replace our own handler of an earlier call (main() called twice in one process);
        # leave anyone else's (pytest's capture) alone.
        if getattr(h, "_brainfs", False):
            root.removeHandler(h)
            h.close()
    root.addHandler(handler)
    root.setLevel(level)
    for name in NOISY:
        logging.getLogger(name).setLevel(logging.DEBUG if verbosity >= 3 else max(level, logging.WARNING))

"""A source's JSON document or data export .zip read, with one-line errors that name the
file and the place (a download cut short is the usual cause of a bad one)."""

from __future__ import annotations

import json
import re
import zipfile
from pathlib import Path
from typing import Any

from brainfs.cache.sessions.conversation import ImportInputError


def load_json(path: Path, data: bytes, what: str) -> Any:
    try:
        return json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise ImportInputError(f"{path}: not UTF-8 text ({what} is UTF-8 JSON)") from None
    except ValueError as e:
        raise ImportInputError(f"{path}: not valid JSON: {json_error(e)}; "
                               f"{what} must be one JSON document") from None


def json_error(e: ValueError, what: str = "file") -> str:
    """A JSON parse error as one phrase with its place: "unterminated string starting at
    line 1, column 5012 (the file ends inside it: is it complete?)" (``json``'s own message
    ends in "at" and leaves the place to be added, once). An error where the text ends says
    so: a download or copy cut short is the usual cause. ``what``: the text parsed (a file,
    a line)."""
    msg = (getattr(e, "msg", None) or str(e)).strip()
    msg = re.sub(r"\s+at$", "", msg)
    lineno, colno = getattr(e, "lineno", None), getattr(e, "colno", None)
    out = msg[:1].lower() + msg[1:] + (f" at line {lineno}, column {colno}" if lineno is not None else "")
    doc, pos = getattr(e, "doc", None), getattr(e, "pos", None)
    if msg.startswith("Unterminated string"):
        out += f" (the {what} ends inside it: is it complete?)"
    elif isinstance(doc, str) and isinstance(pos, int) and pos >= len(doc.rstrip()):
        out += f" (the {what} ends there: is it complete?)"
    return out


def zip_member(path: Path, name: str, what: str) -> bytes:
    """The bytes of the member called ``name`` (in any folder) of a .zip export."""
    try:
        with zipfile.ZipFile(path) as z:
            member = next((n for n in z.namelist() if n.rsplit("/", 1)[-1] == name), None)
            if member is None:
                raise ImportInputError(f"{path}: no {name} inside (expected {what})")
            return z.read(member)
    except zipfile.BadZipFile:
        raise ImportInputError(f"{path}: not a readable .zip file (unzip it and give its "
                               f"{name})") from None

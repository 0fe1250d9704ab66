"""A LIST page's objects read with ElementTree instead of botocore's model-driven parser.

botocore parses a page of 1,000 objects in about 0.12 s of pure Python; the same XML read
here takes under 0.01 s. A mount with an empty cache takes its whole LIST (20 pages at
20,000 files) while it starts and serves its first reads, and that parsing held the
interpreter lock for seconds on a 2-CPU machine. Registered as botocore's
``before-parse.s3.ListObjectsV2`` handler: the ``Contents`` elements are taken out of the
body and read here, botocore parses what is left (truncation, continuation token, common
prefixes) and its own after-call handler URL-decodes the keys as it does for its own
parse, so a page reads the same either way.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from datetime import datetime, timezone
from typing import Any

from botocore.utils import parse_timestamp

_CONTENTS = re.compile(rb"<Contents>.*?</Contents>", re.S)


def _when(text: str) -> datetime:
    """An S3 timestamp (``2026-12-02T15:32:11.000Z``) as botocore gives it: aware, UTC."""
    try:
        t = datetime.fromisoformat(text)
    except ValueError:
        return parse_timestamp(text)
    return t if t.tzinfo is not None else t.replace(tzinfo=timezone.utc)


def contents(body: bytes) -> list[dict[str, Any]]:
    """The ``Contents`` entries of a ListObjectsV2 answer, as botocore would parse them
    (the keys still as sent: URL-encoded when the request asked for that)."""
    root = ET.fromstring(body)
    ns = root.tag[: -len("ListBucketResult")] if root.tag.endswith("ListBucketResult") else ""
    out: list[dict[str, Any]] = []
    for e in root.iter(f"{ns}Contents"):
        obj: dict[str, Any] = {}
        for child in e:
            tag = child.tag[len(ns):]
            text = child.text or ""
            if tag == "Key":
                obj["Key"] = text
            elif tag == "Size":
                obj["Size"] = int(text)
            elif tag == "LastModified":
                obj["LastModified"] = _when(text)
            elif tag in ("ETag", "StorageClass"):
                obj[tag] = text
        out.append(obj)
    return out


def before_parse(response_dict: dict[str, Any], customized_response_dict: dict[str, Any],
                 **_: Any) -> None:
    """botocore's before-parse hook for ListObjectsV2: read the objects here and leave
    botocore the rest of the page. Anything unexpected leaves the page to botocore."""
    if response_dict.get("status_code") != 200:
        return
    body = response_dict.get("body")
    if not isinstance(body, bytes) or b"<Contents>" not in body:
        return
    try:
        objs = contents(body)
    except (ET.ParseError, ValueError):
        return
    if not all("Key" in o for o in objs):
        return
    response_dict["body"] = _CONTENTS.sub(b"", body)
    customized_response_dict["Contents"] = objs


def install(client: Any) -> None:
    """Parse ``client``'s LIST pages with :func:`before_parse`."""
    client.meta.events.register("before-parse.s3.ListObjectsV2", before_parse)

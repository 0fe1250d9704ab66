"""The errors a new user meets first, as the command line shows them: one line that names
what was typed, what brainfs tried and how to point it elsewhere."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def test_dream_without_endpoint_or_credentials_names_the_url_aws_and_both_ways_out(tmp_path: Path):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "BRAINFS_"))}
    env.update(HOME=str(tmp_path), BRAINFS_CONFIG="/dev/null", AWS_EC2_METADATA_DISABLED="true",
               AWS_CONFIG_FILE=str(tmp_path / "none"), AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "none"))
    r = subprocess.run([sys.executable, "-m", "brainfs.front.cli", "dream", "s3://memory/demo"],
                       env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith("brainfs: error: s3://memory/demo: no AWS credentials found"), line
    assert "tried Amazon S3" in line and "AWS_ENDPOINT_URL=http://HOST:PORT" in line, line
    assert "endpoint_url in the config file" in line, line


def test_import_of_a_file_points_to_import_sessions(tmp_path: Path):
    """`brainfs import` takes a memory tree; a transcript or a chat export given to it is
    answered with the command that imports one, as typed."""
    f = tmp_path / "call.md"
    f.write_text("# Planning call, 3 November 2026\n\nUser: Thursday?\nAssistant: Yes.\n")
    env = dict(os.environ, BRAINFS_CONFIG="/dev/null", AWS_ENDPOINT_URL="http://127.0.0.1:9")
    r = subprocess.run([sys.executable, "-m", "brainfs.front.cli", "import", str(f), "s3://memory/demo",
                        "--date", "2026-11-03"], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith("brainfs: error: --date, --speaker and --format are options of `brainfs "
                           f"import-sessions` (session logs, chat exports, transcripts): `brainfs "
                           f"import-sessions {f} s3://memory/demo …`"), line
    r = subprocess.run([sys.executable, "-m", "brainfs.front.cli", "import", str(f), "s3://memory/demo"],
                       env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 1
    (line,) = r.stderr.strip().splitlines()
    assert line == (f"brainfs: error: {f} is a file: `brainfs import` uploads a memory tree (a "
                    f"directory); for a session log, a chat export or a transcript run `brainfs "
                    f"import-sessions {f} s3://memory/demo`"), line

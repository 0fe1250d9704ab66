"""The repository's Dockerfile, built and run: the image indexes a memory with its own ONNX
embedder, then mounts it *inside* a container (`--device /dev/fuse --cap-add SYS_ADMIN`, as
docs/SANDBOX.md says) against the real S3 server on loopback (host network); a process in
the container reads, greps, recalls by meaning and writes, the write reaches the bucket, and
`docker stop` unmounts cleanly (the daemon exits 0).

The container runtime is Docker with BuildKit. A running daemon is used if there is one;
else, as root with `dockerd` installed (Debian's docker.io), the test starts a private one
(its own socket, bridge and iptables off: every container here uses the host's network) and
stops it by PID at the end. Its images and build cache live in DATA_ROOT and survive the
run, so a second run only rebuilds what changed (seconds for a source change). The base
image is debian:12-slim when the daemon has it or can pull it; where no image registry is
reachable (this project's machines), one is made from Debian's packages with debootstrap and
`docker import`. Skipped, with the reason, only when no runtime or no way to a base image
exists.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from brainfs.backend.errors import NoSuchKey
from brainfs.backend.store import ObjectStore
from brainfs.fs.process import stop_child

from helpers import RECALL_OLD, RECALL_TREE, upload_tree, write_tree

pytestmark = [pytest.mark.mount, pytest.mark.model]

IMAGE = "brainfs:test"
BASE_TAG = "brainfs-test-base:bookworm"
#: The private daemon's images and build cache, kept between runs.
DATA_ROOT = Path("/var/lib/brainfs-test-docker")
#: Debian's archive (a package registry this project's machines reach) for debootstrap.
DEBIAN_MIRROR = "http://deb.debian.org/debian"
#: The flags docs/SANDBOX.md gives for a mount inside a container.
FUSE_FLAGS = ["--device", "/dev/fuse", "--cap-add", "SYS_ADMIN",
              "--security-opt", "apparmor=unconfined"]
QUESTION = "which cooperative runs wheelchair minibuses"


@dataclass
class Docker:
    """A Docker client that can build with BuildKit, and the daemon it talks to."""

    client: str
    env: dict[str, str] = field(default_factory=dict)
    #: Our own daemon (DATA_ROOT), whose disk use the test keeps in bounds.
    private: bool = False

    def run(self, *args: str, timeout: float = 120, **kw) -> subprocess.CompletedProcess:
        return subprocess.run([self.client, *args], env=self.env, capture_output=True,
                              text=True, timeout=timeout, **kw)

    def ok(self, *args: str, timeout: float = 120) -> bool:
        try:
            return self.run(*args, timeout=timeout).returncode == 0
        except subprocess.TimeoutExpired:
            return False


def _buildkit_client(env: dict[str, str]) -> str | None:
    """The first docker client whose `build` takes --secret under DOCKER_BUILDKIT=1: a
    client with buildx, or Debian's docker.io 20.10 with BuildKit built in (a newer client
    without buildx refuses BuildKit)."""
    for cand in (shutil.which("docker"), "/usr/bin/docker"):
        if cand and os.access(cand, os.X_OK):
            r = subprocess.run([cand, "build", "--help"], env=env, capture_output=True,
                               text=True, timeout=30)
            if r.returncode == 0 and "--secret" in r.stdout:
                return cand
    return None


@contextlib.contextmanager
def _private_daemon(env: dict[str, str], client: str) -> Iterator[dict[str, str]]:
    """Start a dockerd of our own and stop it by PID; yields the environment that reaches
    it. One at a time on a machine (a lock on DATA_ROOT): two daemons cannot share it."""
    DATA_ROOT.mkdir(parents=True, exist_ok=True)
    lock = open(DATA_ROOT.with_suffix(".lock"), "w")
    fcntl.flock(lock, fcntl.LOCK_EX)
    # Short path: containerd's sockets live under the exec root (108-byte socket paths).
    run_dir = Path(tempfile.mkdtemp(prefix="bfsd-", dir="/tmp"))
    sock = run_dir / "docker.sock"
    log = open(run_dir / "dockerd.log", "wb")
    proc = subprocess.Popen(
        ["dockerd", "--host", f"unix://{sock}", "--data-root", str(DATA_ROOT),
         "--exec-root", str(run_dir / "exec"), "--pidfile", str(run_dir / "dockerd.pid"),
         # No docker0 bridge, no NAT rules: the test's containers use --network host.
         "--bridge=none", "--iptables=false", "--ip6tables=false", "--ip-forward=false",
         "--ip-masq=false"],
        stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    denv = dict(env, DOCKER_HOST=f"unix://{sock}")
    try:
        deadline = time.monotonic() + 60
        while subprocess.run([client, "info"], env=denv, capture_output=True).returncode != 0:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError("dockerd did not start:\n"
                                     + (run_dir / "dockerd.log").read_text()[-3000:])
            time.sleep(0.2)
        yield denv
    finally:
        stop_child(proc, timeout=60)
        log.close()
        # dockerd leaves its default network namespace bind-mounted under the exec root.
        with open("/proc/mounts") as f:
            left = [line.split()[1] for line in f if line.split()[1].startswith(f"{run_dir}/")]
        for mp in sorted(left, reverse=True):
            subprocess.run(["umount", "-l", mp], check=False)
        shutil.rmtree(run_dir, ignore_errors=True)
        lock.close()


@pytest.fixture(scope="module")
def docker() -> Iterator[Docker]:
    env = dict(os.environ, DOCKER_BUILDKIT="1")
    client = _buildkit_client(env)
    if client is None:
        pytest.skip("no docker client that builds with BuildKit (Debian: apt-get install docker.io)")
    if subprocess.run([client, "info"], env=env, capture_output=True).returncode == 0:
        yield Docker(client, env)
        return
    if shutil.which("dockerd") is None or os.geteuid() != 0:
        pytest.skip("no running Docker daemon, and no dockerd to start one as root "
                    "(Debian: apt-get install docker.io)")
    with _private_daemon(env, client) as denv:
        yield Docker(client, denv, private=True)


def _base_image(d: Docker, tmp: Path) -> str:
    """debian:12-slim if the daemon has it or can pull it, else a Debian 12 minbase built
    here from Debian's packages (kept as BASE_TAG for the next run)."""
    for tag in ("debian:12-slim", BASE_TAG):
        if d.ok("image", "inspect", tag):
            return tag
    if d.ok("pull", "debian:12-slim", timeout=300):
        return "debian:12-slim"
    if shutil.which("debootstrap") is None:
        pytest.skip("no Debian 12 base image: `docker pull debian:12-slim` failed and "
                    "debootstrap is not installed (apt-get install debootstrap)")
    rootfs = tmp / "rootfs"
    r = subprocess.run(["debootstrap", "--variant=minbase", "bookworm", str(rootfs), DEBIAN_MIRROR],
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    for junk in ("var/cache/apt/archives", "var/lib/apt/lists"):
        for p in (rootfs / junk).glob("*"):
            if p.is_file():
                p.unlink()
    tar = subprocess.Popen(["tar", "-C", str(rootfs), "-c", "."], stdout=subprocess.PIPE)
    imp = subprocess.run([d.client, "import", "-", BASE_TAG], stdin=tar.stdout, env=d.env,
                         capture_output=True, text=True, timeout=600)
    tar.wait()
    assert imp.returncode == 0 and tar.returncode == 0, imp.stderr
    shutil.rmtree(rootfs, ignore_errors=True)
    return BASE_TAG


def _context(repo_root: Path, dest: Path) -> Path:
    """The build context: the work tree's files as git sees them (tracked and new, not
    ignored), and in docker/wheels/ the wheels pip's find-links offer on this machine
    (here the CPU build of torch, which PyPI does not carry)."""
    files = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           cwd=repo_root, capture_output=True, check=True).stdout.split(b"\0")
    for rel in filter(None, (f.decode() for f in files)):
        src = repo_root / rel
        if src.is_file():
            (dest / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / rel)
    wheels = dest / "docker" / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    for d in os.environ.get("PIP_FIND_LINKS", "").split():
        for whl in Path(d).glob("*.whl") if Path(d).is_dir() else ():
            try:
                os.link(whl, wheels / whl.name)
            except OSError:
                shutil.copy2(whl, wheels / whl.name)
    return dest


def _pip_cert() -> str | None:
    """The CA bundle pip is told to trust here (a TLS-intercepting proxy's), if any."""
    cert = os.environ.get("PIP_CERT")
    if not cert:
        r = subprocess.run([sys.executable, "-m", "pip", "config", "get", "global.cert"],
                           capture_output=True, text=True)
        cert = r.stdout.strip() if r.returncode == 0 else None
    return cert if cert and Path(cert).is_file() else None


@pytest.fixture(scope="module")
def image(docker: Docker, repo_root: Path, tmp_path_factory: pytest.TempPathFactory) -> str:
    tmp = tmp_path_factory.mktemp("image")
    base = _base_image(docker, tmp)
    ctx = _context(repo_root, tmp / "context")
    args = ["build", "--network", "host", "--progress", "plain", "--build-arg", f"BASE={base}",
            "-t", IMAGE, str(ctx)]
    cert = _pip_cert()
    if cert:
        args[1:1] = ["--secret", f"id=ca_bundle,src={cert}"]
    t0 = time.monotonic()
    r = docker.run(*args, timeout=2400)
    (tmp / "build.log").write_text(r.stdout + r.stderr)
    assert r.returncode == 0, (r.stdout + r.stderr)[-5000:]
    sys.stderr.write(f"\n{IMAGE} built in {time.monotonic() - t0:.0f}s from {base}\n")
    # The image of the previous source is now untagged: drop it (its big layer is shared).
    docker.run("image", "prune", "-f")
    if docker.private:
        # Each change to the requirements leaves a ~3 GB build stage behind: keep the most
        # recently used cache only (the current build's is about 4 GB).
        docker.run("builder", "prune", "-f", "--keep-storage", "8GB", timeout=600)
    shutil.rmtree(ctx, ignore_errors=True)
    return IMAGE


@pytest.mark.timeout(2700)  # a first build downloads and installs every dependency
def test_mount_inside_a_container(docker: Docker, image: str, store: ObjectStore, corpus,
                                  s3_server, tmp_path: Path) -> None:
    upload_tree(store, write_tree(tmp_path / "src", RECALL_TREE))
    env = ["-e", f"AWS_ENDPOINT_URL={s3_server.url}", "-e", "BRAINFS_CONFIG=/dev/null"]

    # The image's own embedder (the ONNX export made at build time) indexes the memory.
    r = docker.run("run", "--rm", "--network", "host", *env, image, "index", str(corpus),
                   timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr

    name = f"brainfs-test-{os.getpid()}-{tmp_path.name}"
    try:
        r = docker.run("run", "-d", "--name", name, "--network", "host", *FUSE_FLAGS, *env,
                       # Not the old session: it must come in through recall.
                       "-e", "BRAINFS_PRELOAD_RECENT_TRANSCRIPTS=1",
                       "-e", "BRAINFS_PRELOAD_GLOBS=GUIDE.md,knowledge/INDEX.md",
                       image, "mount", str(corpus), "/memory", "--foreground")
        assert r.returncode == 0, r.stderr

        def status() -> dict | None:
            s = docker.run("exec", name, "cat", "/memory/.brainfs/status")
            return json.loads(s.stdout) if s.returncode == 0 else None

        deadline = time.monotonic() + 120
        while (st := status()) is None or st["recall"] != "ready":
            running = docker.run("inspect", "-f", "{{.State.Running}}", name).stdout.strip()
            assert running == "true", docker.run("logs", name).stderr[-3000:]
            assert time.monotonic() < deadline, f"mount not ready: {st}"
            time.sleep(0.3)
        assert st["kernel_cache_flags"] is True  # the image's pyfuse3 is our patched build

        def sh(cmd: str) -> subprocess.CompletedProcess:
            return docker.run("exec", name, "sh", "-c", cmd, timeout=120)

        r = sh("cat /memory/GUIDE.md && ls /memory/sessions "
               "&& grep -rl 'grant budget' /memory/sessions")
        assert r.returncode == 0, r.stderr
        assert "Keep answers short." in r.stdout
        assert "2025-02-03-sendai" not in r.stdout  # not preloaded
        assert "/memory/sessions/2026-01-10-budget/transcript.md" in r.stdout

        # Recall by meaning (no shared word with the question's key terms needed), hybrid:
        # the dense half is the image's ONNX embedder. The hit is materialized.
        r = sh(f"cat '/memory/.recall/{QUESTION}.json'")
        assert r.returncode == 0, r.stderr
        hits = json.loads(r.stdout)
        assert hits["mode"] == "hybrid", hits.get("mode")
        assert hits["cards"][0]["path"] == RECALL_OLD, [c["path"] for c in hits["cards"]]
        r = sh(f"cat '/memory/{RECALL_OLD}' && grep -rl minibuses /memory/sessions")
        assert r.stdout.startswith(RECALL_TREE[RECALL_OLD]) and f"/memory/{RECALL_OLD}" in r.stdout, r.stderr

        r = sh("printf 'written in the container\\n' > /memory/notes.md && echo wrote")
        assert r.stdout == "wrote\n", r.stderr

        # `docker stop` is SIGTERM to the container's main process, the mount daemon: it
        # flushes pending uploads, unmounts and exits 0. (`brainfs umount` from a `docker
        # exec` does the same, but Docker kills the exec'd process as the container ends.)
        r = docker.run("stop", "-t", "60", name, timeout=120)
        assert r.returncode == 0, r.stderr
        logs = docker.run("logs", name)
        code = docker.run("inspect", "-f", "{{.State.ExitCode}}", name).stdout.strip()
        assert code == "0", logs.stdout + logs.stderr[-3000:]
        assert "Traceback" not in logs.stderr, logs.stderr[-3000:]
        try:
            assert store.get("notes.md")[0] == b"written in the container\n"
        except NoSuchKey:
            raise AssertionError("the container's write never reached the bucket") from None
    finally:
        docker.run("rm", "-f", name)

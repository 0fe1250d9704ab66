"""The command line's edges around a real mount (issue 15): the mountpoint and prefix
checks, verbosity and the rotated key=value log reaching the daemon, recall through a mount,
systemd readiness, ``mount -t brainfs`` through mount(8), and an interrupted import that the
next run finishes.

Real S3 server on loopback, real FUSE mounts; every daemon is unmounted and killed by PID in
teardown.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from brainfs.backend.config import Config
from brainfs.backend.keys import CorpusURL
from brainfs.backend.store import ObjectStore

from helpers import (CLI_TREE, REPO, is_mounted, one_error_line, s3get, sigint_as_a_terminal, upload_tree,
                     wait_for, write_tree)

pytestmark = pytest.mark.mount

CLI = [sys.executable, "-m", "brainfs.front.cli"]
VENV_BIN = Path(sys.executable).parent


@pytest.fixture
def env(tmp_path: Path, cfg: Config) -> dict[str, str]:
    e = dict(os.environ, AWS_ENDPOINT_URL=cfg.endpoint_url or "", BRAINFS_CONFIG="/dev/null",
             BRAINFS_CACHE_DIR=str(tmp_path / "cache"), BRAINFS_EMBEDDER="none",
             BRAINFS_RECALL_WARMUP="0")
    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "NOTIFY_SOCKET"):
        e.pop(k, None)
    return e


def cli(*args: str, env: dict[str, str], timeout: float = 120,
        cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], env=env, capture_output=True, text=True, timeout=timeout,
                          cwd=cwd)


def _seed(store: ObjectStore, tmp_path: Path) -> None:
    upload_tree(store, write_tree(tmp_path / "src", CLI_TREE))


def _umount(mp: Path, env: dict[str, str]) -> None:
    r = cli("umount", str(mp), env=env)
    assert r.returncode == 0, r.stderr


# ----------------------------------------------------------------------------- mistakes


def test_missing_mountpoint_is_an_error_not_created(tmp_path: Path, env, corpus, store) -> None:
    _seed(store, tmp_path)
    mp = tmp_path / "no" / "such" / "dir"
    for extra in ([], ["--foreground"]):
        r = cli("mount", str(corpus), str(mp), *extra, env=env)
        line = one_error_line(r)
        assert "does not exist" in line and "mkdir" in line
        assert not mp.exists() and not (tmp_path / "no").exists()


def test_empty_prefix_warns_and_mounts(tmp_path: Path, env, corpus, store, background) -> None:
    _seed(store, tmp_path)
    typo = f"s3://{corpus.bucket}/users/b"  # the corpus is s3://BUCKET/users/a
    mp = tmp_path / "mnt"
    mp.mkdir()
    background.append(mp)
    r = cli("mount", typo, str(mp), env=env)
    assert r.returncode == 0, r.stderr
    warn = [ln for ln in r.stderr.splitlines() if "warning" in ln]
    assert len(warn) == 1 and "holds no files" in warn[0] and "empty memory" in warn[0], r.stderr
    assert f"did you mean s3://{corpus.bucket}/users/a" in warn[0]
    assert "the corpus has no file yet" in r.stdout, r.stdout  # not "was in the cache already"
    assert is_mounted(mp) and os.listdir(mp) == []
    _umount(mp, env)
    # -q: errors only.
    r = cli("-q", "mount", typo, str(mp), env=env)
    assert r.returncode == 0 and r.stderr == "" and r.stdout == "", (r.stdout, r.stderr)
    _umount(mp, env)
    # The mounts left nothing there (no listing snapshot), so the typo stays empty and the
    # commands that write into a corpus still refuse it.
    other = ObjectStore(CorpusURL.parse(typo), Config().override(endpoint_url=env["AWS_ENDPOINT_URL"]))
    try:
        assert [o.path for o in other.list()] == []
        other.put(".brainfs/listing.json.gz", b"left by an older version")
        for args in (["correct", "x, not y", typo], ["dream", typo, "--no-embed"]):
            line = one_error_line(cli(*args, env=env))
            assert "holds no files" in line, (args, line)
        assert [o.path for o in other.list()] == [".brainfs/listing.json.gz"]
    finally:
        other.close()


# ----------------------------------------------------------------------------- logs


def test_verbose_reaches_the_daemon_log(tmp_path: Path, env, corpus, store, background) -> None:
    _seed(store, tmp_path)
    mp = tmp_path / "mnt"
    mp.mkdir()
    background.append(mp)
    log = tmp_path / "cache" / "mount.log"
    # No -v: INFO lines, no DEBUG.
    r = cli("mount", str(corpus), str(mp), env=env)
    assert r.returncode == 0, r.stderr
    (mp / "notes" / "new.md").write_text("written\n")
    _umount(mp, env)
    text = log.read_text()
    assert " INFO brainfs.mount: ready: check_s=" in text
    assert " DEBUG " not in text
    # Plain key=value lines: no Python dict reprs anywhere.
    assert "{'" not in text and "': " not in text, text
    # -v after the command (and --log-format json before it): DEBUG lines, one JSON object each.
    log.unlink()
    r = cli("--log-format", "json", "mount", str(corpus), str(mp), "-v", env=env)
    assert r.returncode == 0, r.stderr
    _umount(mp, env)
    lines = [json.loads(ln) for ln in log.read_text().splitlines()]
    assert any(d["level"] == "debug" and d["logger"] == "brainfs" for d in lines)
    ready = [d for d in lines if d["msg"].startswith("ready:")]
    assert ready and isinstance(ready[0]["preload_files"], int)


# ----------------------------------------------------------------------------- recall


def test_recall_through_a_mount(tmp_path: Path, env, corpus, store, mounter) -> None:
    _seed(store, tmp_path)
    # No index yet: a clear error and a non-zero exit, in both output forms.
    m = mounter(corpus, name="noindex")
    for extra in ([], ["--json"]):
        line = one_error_line(cli("recall", "Kyoto", "--mount", str(m.mountpoint), *extra, env=env))
        assert "no search index" in line and "brainfs index" in line
    m.stop()
    r = cli("index", str(corpus), "--no-embed", env=env)
    assert r.returncode == 0, r.stderr
    m = mounter(corpus, name="indexed", env_extra={"BRAINFS_EMBEDDER": "none", "BRAINFS_RECALL_K": "2"})
    wait_for(lambda: json.loads((m.mountpoint / ".brainfs/status").read_text())["recall"] == "ready",
             what="recall ready")
    for k in (1, 2):
        r = cli("recall", "Kyoto", "--mount", str(m.mountpoint), "-k", str(k), env=env)
        assert r.returncode == 0, r.stderr
        assert len(re.findall(r"^- `", r.stdout, re.M)) == k, r.stdout
        assert "## Files now materialized" in r.stdout
        r = cli("recall", "Kyoto", "--mount", str(m.mountpoint), "-k", str(k), "--json", env=env)
        assert len(json.loads(r.stdout)["cards"]) == k
    # More than the mount's recall_k: the mount honours -k (the question carries it as
    # "… [k=N]"), in both output forms, and materializes every hit.
    for extra in ([], ["--json"]):
        r = cli("recall", "Kyoto", "--mount", str(m.mountpoint), "-k", "4", *extra, env=env)
        assert r.returncode == 0 and not r.stderr.strip(), r.stderr
        if extra:
            data = json.loads(r.stdout)
            assert len(data["cards"]) == 4 and set(data["materialized"]) >= {c["path"] for c in data["cards"]}
        else:
            assert len(re.findall(r"^- `", r.stdout, re.M)) == 4, r.stdout
    assert "argument -k: must be at most 200 (got 201)" in one_error_line(
        cli("recall", "Kyoto", "--mount", str(m.mountpoint), "-k", "201", env=env))
    # The magic file itself: a bad k is an answer naming the limit, not a failed read.
    assert "k must be" in (m.mountpoint / ".recall" / "Kyoto [k=0].json").read_text()
    line = one_error_line(cli("recall", "", "--mount", str(m.mountpoint), env=env))
    assert "empty query" in line
    # A folder inside the mount stands for the mount (it said "not a running brainfs mount").
    r = cli("recall", "Kyoto", "--mount", str(m.mountpoint / "notes"), "-k", "1", env=env)
    assert r.returncode == 0 and len(re.findall(r"^- `", r.stdout, re.M)) == 1, r.stderr


# ----------------------------------------------------------------------------- systemd


def test_sd_notify_ready(tmp_path: Path, cfg: Config, corpus, store, mounter) -> None:
    """A `Type=notify` unit runs `brainfs mount --foreground`: systemd hears READY=1 once
    the mount answers (and STOPPING=1 on the way out)."""
    _seed(store, tmp_path)
    sock_path = tmp_path / "notify.sock"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(sock_path))
    sock.settimeout(60)
    try:
        m = mounter(corpus, env_extra={"NOTIFY_SOCKET": str(sock_path)})
        got: list[str] = []
        while not any("READY=1" in g for g in got):
            got.append(sock.recv(4096).decode())
        ready = next(g for g in got if "READY=1" in g)
        assert f"MAINPID={m.proc.pid}" in ready
        assert is_mounted(m.mountpoint) and (m.mountpoint / "GUIDE.md").read_text()
        m.stop()
        sock.settimeout(5)
        rest = []
        try:
            while True:
                rest.append(sock.recv(4096).decode())
        except TimeoutError:
            pass
        assert "STOPPING=1" in rest
    finally:
        sock.close()


def test_systemd_unit_example_is_valid() -> None:
    unit = REPO / "fs" / "brainfs.service"
    text = unit.read_text()
    assert "Type=notify" in text and "--foreground" in text
    assert re.search(r"^ExecStart=\S+/brainfs mount s3://\S+ /\S+ --foreground$", text, re.M)
    if shutil.which("systemd-analyze"):
        r = subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True, text=True)
        assert "Unknown" not in r.stderr, r.stderr


# ----------------------------------------------------------------------------- mount -t


def _can_overlay_sbin() -> str | None:
    if os.geteuid() != 0:
        return "needs root (mount(8) and a private mount namespace)"
    if not shutil.which("unshare"):
        return "no unshare(1)"
    r = subprocess.run(["unshare", "-m", "true"], capture_output=True)
    if r.returncode != 0:
        return "cannot create a mount namespace here"
    return None


@pytest.mark.parametrize("fstype", ["brainfs", "fuse.brainfs"])
def test_mount_dash_t(tmp_path: Path, cfg: Config, corpus, store, fstype: str) -> None:
    """`mount -t brainfs SOURCE DIR -o …` as fstab runs it. mount(8) finds helpers in /sbin
    only, so the test lays the package's helpers over /sbin in a private mount namespace
    (nothing on the machine changes) and runs mount, a read, a refused write and umount
    there."""
    why = _can_overlay_sbin()
    if why:
        pytest.skip(why)
    _seed(store, tmp_path)
    helpers = tmp_path / "helpers"
    helpers.mkdir()
    for name in ("mount.brainfs", "mount.fuse.brainfs"):
        assert (VENV_BIN / name).exists(), f"{name} is not installed (pip install -e .)"
        (helpers / name).symlink_to(VENV_BIN / name)
    mp = tmp_path / "mnt"
    mp.mkdir()
    opts = (f"endpoint_url={cfg.endpoint_url},cache_dir={tmp_path / 'cache'},config=/dev/null,"
            "ro,_netdev,nofail,x-systemd.automount,recall_warmup=0")
    script = f"""
set -e
mount -t overlay overlay -o lowerdir={helpers}:/usr/sbin /usr/sbin
mount -t {fstype} {corpus} {mp} -o {opts}
grep -q " {mp} fuse.brainfs " /proc/mounts
cat {mp}/.brainfs/status > {tmp_path}/status.json
cat {mp}/GUIDE.md > {tmp_path}/guide.md
if touch {mp}/new.md 2>{tmp_path}/touch.err; then echo "write accepted"; exit 3; fi
umount {mp}
"""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "BRAINFS_"))}
    r = subprocess.run(["unshare", "-m", "sh", "-c", script], env=env, capture_output=True,
                       text=True, timeout=120)
    pid = None
    try:
        pid = json.loads((tmp_path / "status.json").read_text())["pid"]
    except (OSError, ValueError):
        pass
    try:
        assert r.returncode == 0, (r.stdout, r.stderr)
        assert (tmp_path / "guide.md").read_text() == CLI_TREE["GUIDE.md"]
        assert "Read-only file system" in (tmp_path / "touch.err").read_text()
        st = json.loads((tmp_path / "status.json").read_text())
        assert st["read_only"] is True and st["corpus"] == str(corpus)
        # umount(8) ended the daemon (it flushes, then exits).
        wait_for(lambda: not Path(f"/proc/{pid}").exists() or
                 open(f"/proc/{pid}/stat").read().split(") ")[1].startswith("Z"),
                 timeout=30, what="daemon exit after umount")
    finally:
        if pid and Path(f"/proc/{pid}").exists():
            os.kill(pid, signal.SIGKILL)


def test_mount_fuse_argument_shape(tmp_path: Path, cfg: Config, corpus, store, background) -> None:
    """mount.fuse runs `brainfs SOURCE DIR -o OPTS` (type `fuse.brainfs` or the
    `brainfs#SOURCE` form): the same shape works with the brainfs command itself, and
    unknown options are refused."""
    _seed(store, tmp_path)
    mp = tmp_path / "mnt"
    mp.mkdir()
    background.append(mp)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "BRAINFS_"))}
    r = subprocess.run([str(VENV_BIN / "mount.fuse.brainfs"), str(corpus), str(mp), "-o",
                        f"bogus_option,endpoint_url={cfg.endpoint_url}"], env=env,
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 and "unknown mount option 'bogus_option'" in r.stderr
    assert not is_mounted(mp)
    if os.geteuid() == 0:
        # Through mount(8) and the real mount.fuse3, which runs `brainfs SOURCE DIR -o …`.
        src = f"{VENV_BIN / 'brainfs'}#{corpus}"
        cmd = ["mount", "-t", "fuse", src, str(mp), "-o",
               f"endpoint_url={cfg.endpoint_url},cache_dir={tmp_path / 'c'},config=/dev/null,"
               "preload_budget=64M,nofail,recall_warmup=0"]
    else:
        cmd = [str(VENV_BIN / "brainfs"), str(corpus), str(mp), "-o",
               f"endpoint_url={cfg.endpoint_url},cache_dir={tmp_path / 'c'},config=/dev/null"]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert is_mounted(mp) and (mp / "GUIDE.md").read_text() == CLI_TREE["GUIDE.md"]
    (mp / "notes" / "via-fstab.md").write_text("written\n")
    r = subprocess.run([*CLI, "umount", str(mp)], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    assert store.get("notes/via-fstab.md")[0] == b"written\n"


# ----------------------------------------------------------------------------- import


def test_interrupted_import_stops_and_the_rerun_finishes(tmp_path: Path, s3_server, cfg: Config,
                                                         env) -> None:
    """Ctrl-C at a few hundred of 600 files: the workers stop (nothing more is uploaded after
    the exit), the message says what was done, and the next run uploads the rest and
    builds the preload pack."""
    from benchmarks.s3proxy import S3Proxy
    from brainfs.cache.local.pack import PACK_KEY, read_pack

    url = CorpusURL.parse(f"s3://imp{os.getpid()}/users/a")
    store = ObjectStore(url, cfg)
    store.create_bucket()
    files = {f"notes/t{i // 50}/n{i:04d}.md": f"---\ntype: fact\n---\n\nfact {i}\n" for i in range(600)}
    files["GUIDE.md"] = "guide\n"
    src = write_tree(tmp_path / "src", files)
    host, port = s3_server.url.removeprefix("http://").split(":")
    proxy = S3Proxy((host, int(port)), delay=0.02)  # 20 ms a request: ~4 uploads a 20 ms
    proxy.start()
    p = None
    try:
        penv = dict(env, AWS_ENDPOINT_URL=proxy.url, BRAINFS_MAX_WORKERS="4")
        p = subprocess.Popen([*CLI, "import", str(src), str(url)], env=penv, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, preexec_fn=sigint_as_a_terminal)
        wait_for(lambda: sum(1 for _ in store.list()) >= 40, timeout=60, what="first uploads")
        t0 = time.monotonic()
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=30)
        stopped_in = time.monotonic() - t0
        assert p.returncode == 130, (out, err)
        assert stopped_in < 5, stopped_in
        assert "Traceback" not in err
        m = re.search(r"interrupted: (\d+) uploaded, 0 unchanged, (\d+) not done; run the same "
                      r"command again to finish", err)
        assert m, err
        done, left = int(m.group(1)), int(m.group(2))
        assert done + left == 601 and 0 < left
        # The workers are stopped: nothing lands after the exit (but the record of what
        # was imported, .brainfs/imported.json, written on the way out).
        def uploaded() -> int:
            return sum(1 for o in store.list() if not o.path.startswith(".brainfs/"))

        n = uploaded()
        time.sleep(1.0)
        assert uploaded() == n == done
        assert read_pack(store) is None
        # The re-run finishes the job, the pack included.
        r = subprocess.run([*CLI, "import", str(src), str(url)], env=penv, capture_output=True,
                           text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        assert f"{left} uploaded, {done} unchanged" in r.stdout
        assert "preload pack:" in r.stdout
        pack = read_pack(store)
        assert pack is not None and {p for p, _, _ in pack} >= {"GUIDE.md"}
        # A third run with everything in place rebuilds nothing.
        r = subprocess.run([*CLI, "import", str(src), str(url)], env=penv, capture_output=True,
                           text=True, timeout=300)
        assert "0 uploaded, 601 unchanged" in r.stdout and "preload pack" not in r.stdout
        # A pack gone stale (deleted here) is rebuilt even with nothing to upload.
        store.delete(PACK_KEY)
        r = subprocess.run([*CLI, "import", str(src), str(url)], env=penv, capture_output=True,
                           text=True, timeout=300)
        assert "0 uploaded, 601 unchanged" in r.stdout and "preload pack:" in r.stdout
    finally:
        if p is not None and p.poll() is None:
            p.kill()
            p.wait()
        proxy.stop()
        store.close()


# ----------------------------------------------------------------------------- demo


def test_demo_shows_commands_as_typed(tmp_path: Path) -> None:
    """`brainfs demo` prints each step as the user would type it (`brainfs status memory`),
    never the interpreter path it runs them with."""
    from brainfs.backend.server import free_port

    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "BRAINFS_"))}
    env.update(BRAINFS_CONFIG="/dev/null", BRAINFS_EMBEDDER="none", BRAINFS_RECALL_WARMUP="0")
    port = str(free_port())
    mp = tmp_path / "mem"
    try:
        r = subprocess.run([*CLI, "demo", "mem", "--port", port, "--size", "40"], cwd=tmp_path,
                           env=env, capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stdout + r.stderr
        shown = [ln[2:] for ln in r.stdout.splitlines() if ln.startswith("$ ")]
        assert "brainfs status mem" in shown, shown
        assert "brainfs import .demo/sample-40 s3://memory/demo" in shown
        assert "brainfs mount s3://memory/demo mem" in shown
        assert sys.executable not in r.stdout and "brainfs.front.cli" not in r.stdout
        assert "recall:    ready" in r.stdout
        # --stop with no directory: the demo's own mount is unmounted wherever it is.
        r = subprocess.run([*CLI, "demo", "--stop"], cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=120)
        assert r.returncode == 0 and "stopped the S3 server" in r.stdout, r.stdout + r.stderr
        assert not is_mounted(mp)
        r = subprocess.run([*CLI, "demo", "--stop"], cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=120)
        assert r.returncode == 0 and "nothing to stop" in r.stdout, r.stdout + r.stderr
    finally:
        subprocess.run([*CLI, "demo", "mem", "--stop"], cwd=tmp_path, env=env,
                       capture_output=True, timeout=120)
        if is_mounted(mp):
            subprocess.run(["fusermount3", "-u", "-z", str(mp)], check=False)
        pidfile = tmp_path / ".demo" / "s3.pid"
        if pidfile.exists():
            try:
                os.kill(int(pidfile.read_text()), signal.SIGKILL)
            except ProcessLookupError:
                pass


# ----------------------------------------------------------------------------- umount --force


def test_umount_force_detaches_a_hung_mount(tmp_path: Path, env, corpus, store, mounter) -> None:
    """A stopped daemon never answers: `umount` says so in one line instead of hanging, and
    `umount --force` detaches the mount and kills the daemon."""
    _seed(store, tmp_path)
    m = mounter(corpus)
    pid = m.proc.pid
    os.kill(pid, signal.SIGSTOP)
    try:
        t0 = time.monotonic()
        r = cli("umount", str(m.mountpoint), "--timeout", "2", env=env, timeout=60)
        assert time.monotonic() - t0 < 30
        line = one_error_line(r)
        assert "does not answer" in line and str(pid) in line and "--force" in line
        assert is_mounted(m.mountpoint)
        r = cli("umount", "--force", str(m.mountpoint), "--timeout", "2", env=env, timeout=60)
        assert r.returncode == 0, r.stderr
        assert "by force" in r.stdout and f"daemon {pid} killed" in r.stdout
        assert not is_mounted(m.mountpoint)
        m.proc.wait(timeout=10)
        assert m.proc.returncode == -signal.SIGKILL
    finally:
        if m.proc.poll() is None:
            os.kill(pid, signal.SIGCONT)


# ----------------------------------------------------------------------------- ls


def test_ls_lists_the_whole_corpus(tmp_path: Path, env, corpus, store, mounter) -> None:
    """A mount lists its working set; `brainfs ls` lists every file of the corpus, under the
    path given, so `brainfs ls MP | xargs grep` reads them all (each fetched on open)."""
    _seed(store, tmp_path)
    old = {f"sessions/2020-01-{d:02d}-old/transcript.md": f"[D1:1] Mara: old day {d} quillfeather\n"
           for d in range(1, 6)}
    for path, text in old.items():
        store.put(path, text.encode())
    m = mounter(corpus, env_extra={"BRAINFS_PRELOAD_RECENT_TRANSCRIPTS": "1"})
    mp = m.mountpoint
    listed = {str(p.relative_to(mp)) for p in mp.rglob("*") if p.is_file()}
    every = set(CLI_TREE) | set(old)
    assert listed < every  # the working set: not every transcript
    r = cli("status", str(mp), env=env)
    assert f"`brainfs ls {mp}` lists all" in r.stdout  # status says how to see everything
    r = cli("ls", str(mp), env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == sorted(f"{mp}/{p}" for p in every)
    r = cli("ls", str(mp / "sessions"), env=env)
    paths = r.stdout.splitlines()
    assert paths == sorted(f"{mp}/{p}" for p in every if p.startswith("sessions/"))
    hits = subprocess.run(["grep", "-l", "quillfeather", *paths], capture_output=True, text=True)
    assert len(hits.stdout.splitlines()) == 5
    r = cli("ls", str(corpus), "--long", env=env)
    assert len(r.stdout.splitlines()) == len(every) and "GUIDE.md" in r.stdout
    assert ".brainfs" not in r.stdout
    line = one_error_line(cli("ls", str(mp / "nosuch"), env=env))
    assert "no such file or directory" in line
    line = one_error_line(cli("ls", str(tmp_path), env=env))
    assert "brainfs mount" in line
    # As the mount shows them: a link by its own name, no directory markers; a file by itself.
    (mp / "empty-dir").mkdir()
    os.symlink("GUIDE.md", mp / "guide-link.md")
    os.sync()
    wait_for(lambda: "guide-link.md" in cli("ls", str(mp), env=env).stdout, timeout=30,
             what="the link uploaded")
    out = cli("ls", str(mp), env=env).stdout.splitlines()
    assert f"{mp}/guide-link.md" in out and not [x for x in out if ".brainfs" in x], out
    assert cli("ls", str(mp / "GUIDE.md"), env=env).stdout.splitlines() == [f"{mp}/GUIDE.md"]
    assert cli("ls", str(mp / "guide-link.md"), env=env).stdout.splitlines() == [f"{mp}/guide-link.md"]
    # A whole bucket (no prefix) shows no prefix's own objects.
    store.put(".brainfs/listing.json.gz", b"x")
    bucket = f"s3://{corpus.bucket}"
    r = cli("ls", bucket, env=env)
    assert r.returncode == 0 and "GUIDE.md" in r.stdout and ".brainfs" not in r.stdout, r.stdout


def test_ctrl_c_during_the_preload_cancels_the_mount(tmp_path: Path, s3_server, cfg: Config,
                                                      env, corpus, store) -> None:
    """Ctrl-C while `brainfs mount` shows the preload: the daemon (in its own session, so
    the terminal's SIGINT does not reach it) is stopped and nothing stays mounted."""
    from benchmarks.s3proxy import S3Proxy
    from brainfs.front.cli import _daemon_pids, _target

    for i in range(150):
        store.put(f"notes/n{i:03d}.md", f"note {i}\n".encode())
    host, port = s3_server.url.removeprefix("http://").split(":")
    proxy = S3Proxy((host, int(port)), delay=0.2)  # the preload: 150 GETs at 2 x 5 a second
    proxy.start()
    mp = tmp_path / "mnt"
    mp.mkdir()
    p = None
    try:
        penv = dict(env, AWS_ENDPOINT_URL=proxy.url, BRAINFS_MAX_WORKERS="2", BRAINFS_PRELOAD_PACK="0")
        p = subprocess.Popen([*CLI, "mount", str(corpus), str(mp)], env=penv, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, preexec_fn=sigint_as_a_terminal)
        # The daemon, not the command itself (whose command line matches too): before the
        # daemon is spawned, a Ctrl-C is an ordinary interruption of the command.
        wait_for(lambda: [q for q in _daemon_pids(_target(mp)) if q != p.pid], timeout=30,
                 what="the daemon")
        # Into the preload: its GETs are going out (a fixed sleep lost this race on a loaded
        # machine, the preload finishing first).
        wait_for(lambda: proxy.stats["requests"] >= 20, timeout=60, what="the preload's GETs")
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
        assert p.returncode == 130, (out, err)
        assert "cancelled" in err and "Traceback" not in err, err
        assert not is_mounted(mp)
        wait_for(lambda: not _daemon_pids(_target(mp)), timeout=30, what="the daemon to exit")
    finally:
        if p is not None and p.poll() is None:
            p.kill()
        for pid in _daemon_pids(_target(mp)):
            os.kill(pid, signal.SIGKILL)
        if is_mounted(mp):
            subprocess.run(["fusermount3", "-u", "-z", str(mp)], check=False)
        proxy.stop()


def test_interrupted_index_stops_promptly(tmp_path: Path, s3_server, cfg: Config, env, corpus,
                                          store) -> None:
    from benchmarks.s3proxy import S3Proxy
    from brainfs.cache.search.localindex import INDEX_MANIFEST_KEY

    for i in range(300):
        store.put(f"notes/n{i:03d}.md", f"---\ntype: fact\n---\n\nnote {i} about Kyoto\n".encode())
    host, port = s3_server.url.removeprefix("http://").split(":")
    proxy = S3Proxy((host, int(port)), delay=0.2)  # 300 GETs at 2 x 5 a second: 30 s
    proxy.start()
    p = None
    try:
        penv = dict(env, AWS_ENDPOINT_URL=proxy.url, BRAINFS_MAX_WORKERS="2")
        p = subprocess.Popen([*CLI, "index", str(corpus), "--no-embed"], env=penv,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                             preexec_fn=sigint_as_a_terminal)
        # Interrupt once the fetches are under way (a fixed sleep lost that race on a loaded
        # machine: an interrupt before the fetch pool exists tests something else).
        deadline = time.monotonic() + 60
        while proxy.stats["requests"] < 20 and time.monotonic() < deadline and p.poll() is None:
            time.sleep(0.05)
        assert proxy.stats["requests"] >= 20, "the index never started fetching"
        t0 = time.monotonic()
        p.send_signal(signal.SIGINT)
        out, err = p.communicate(timeout=60)
        # Not a speed limit: had the queued fetches not been dropped, the rest of the 30 s
        # would still be to run (the margin is for a loaded machine).
        assert time.monotonic() - t0 < 10, "the queued fetches were not dropped"
        assert p.returncode == 130, (out, err)
        assert "interrupted: nothing uploaded" in err and "Traceback" not in err, err
        assert INDEX_MANIFEST_KEY not in {o.path for o in store.list()}
        r = subprocess.run([*CLI, "index", str(corpus), "--no-embed"], env=env, capture_output=True,
                           text=True, timeout=300)
        assert r.returncode == 0, r.stderr
        assert INDEX_MANIFEST_KEY in {o.path for o in store.list()}
    finally:
        if p is not None and p.poll() is None:
            p.kill()
            p.wait()
        proxy.stop()


def test_a_dead_daemons_mount_names_the_fix(tmp_path: Path, env, corpus, store, mounter,
                                            background) -> None:
    """kill -9 of the daemon leaves the kernel mount attached ("Transport endpoint is not
    connected"): status says to run `brainfs umount`, which detaches it; a new mount there
    detaches it by itself, says so, and mounts (what the dead daemon had not uploaded is in
    its cache: test_stuck_mount.py)."""
    _seed(store, tmp_path)
    m = mounter(corpus)
    mp = m.mountpoint
    m.proc.kill()
    m.proc.wait()
    assert is_mounted(mp)
    line = one_error_line(cli("status", str(mp), env=env))
    assert "daemon has died" in line and f"brainfs umount {mp}" in line, line
    r = cli("umount", str(mp), env=env)
    assert r.returncode == 0 and not is_mounted(mp), r.stderr
    m2 = mounter(corpus, mountpoint=mp)
    m2.proc.kill()
    m2.proc.wait()
    assert is_mounted(mp)
    # A new mount by a relative path, as a user types it.
    background.append(mp)
    r = subprocess.run([*CLI, "mount", str(corpus), mp.name], env=env, capture_output=True,
                       text=True, timeout=120, cwd=mp.parent)
    assert r.returncode == 0, r.stderr
    assert "detached a mount whose daemon had died" in r.stderr, r.stderr
    assert (mp / "GUIDE.md").exists()
    _umount(mp, env)


def test_umount_with_writes_not_uploaded_says_so(tmp_path: Path, env, corpus, store, proxy,
                                                 background) -> None:
    """S3 refusing uploads at unmount: the mount goes, but `brainfs umount` says how many
    writes wait in which cache and exits 75 (a script must not delete that cache); the next
    mount with that cache uploads them."""
    _seed(store, tmp_path)
    penv = dict(env, AWS_ENDPOINT_URL=proxy.url)
    mp = tmp_path / "mnt"
    mp.mkdir()
    background.append(mp)
    r = cli("mount", str(corpus), str(mp), env=penv)
    assert r.returncode == 0, r.stderr
    proxy.force("slowdown", count=100_000, methods={"PUT", "DELETE"})
    (mp / "notes" / "pending.md").write_text("written while S3 refuses uploads\n")
    wait_for(lambda: proxy.stats["faults"].get("slowdown", 0) >= 1, timeout=60, what="a refused upload")
    r = cli("umount", str(mp), "--timeout", "60", env=penv)
    assert r.returncode == 75, (r.returncode, r.stdout, r.stderr)
    assert not is_mounted(mp)
    assert "1 write not uploaded yet" in r.stderr and env["BRAINFS_CACHE_DIR"] in r.stderr, r.stderr
    assert s3get(store, "notes/pending.md") is None
    proxy.clear_forced()
    r = cli("mount", str(corpus), str(mp), env=penv)
    assert r.returncode == 0, r.stderr
    wait_for(lambda: s3get(store, "notes/pending.md") == b"written while S3 refuses uploads\n",
             timeout=60, what="the upload after the remount")
    r = cli("umount", str(mp), env=penv)
    assert r.returncode == 0, r.stderr


def test_umount_timeout_while_a_slow_s3_takes_the_last_uploads(tmp_path: Path, env, corpus, store,
                                                                proxy, background) -> None:
    """The mount is detached at once; the daemon uploads on. Past --timeout, umount says
    so with the daemon's pid and exits 75, not "--force stops it" of a mount already gone."""
    _seed(store, tmp_path)
    penv = dict(env, AWS_ENDPOINT_URL=proxy.url)
    mp = tmp_path / "mnt"
    mp.mkdir()
    background.append(mp)
    assert cli("mount", str(corpus), str(mp), env=penv).returncode == 0
    pid = json.loads((mp / ".brainfs" / "status").read_text())["pid"]
    proxy.set_delay(1.0)
    try:
        for i in range(20):
            (mp / "notes" / f"slow{i}.md").write_text(f"written to a slow S3 {i}\n")
        r = cli("umount", str(mp), "--timeout", "5", env=penv)
        assert r.returncode == 75, (r.returncode, r.stdout, r.stderr)
        assert not is_mounted(mp)
        assert f"daemon {pid} is still uploading" in r.stderr and f"kill {pid}" in r.stderr, r.stderr
        assert "--force" not in r.stderr
    finally:
        proxy.set_delay(0.0)
    wait_for(lambda: not os.path.exists(f"/proc/{pid}"), timeout=90, what="the daemon's end")
    assert all(s3get(store, f"notes/slow{i}.md") == f"written to a slow S3 {i}\n".encode()
               for i in range(20))


def test_umount_refuses_a_mount_a_process_still_writes_to(tmp_path: Path, env, corpus, store,
                                                          background) -> None:
    """The daemon's unmount is lazy: a writer still holding a file would get ENOTCONN at its
    next write. `brainfs umount` names the process and leaves the mount; --force detaches."""
    _seed(store, tmp_path)
    mp = tmp_path / "mnt"
    mp.mkdir()
    background.append(mp)
    # A relative cache directory (as a user types it) is reported absolute.
    assert cli("mount", str(corpus), "mnt", "--cache-dir", "rel-cache", env=env,
               cwd=tmp_path).returncode == 0
    assert json.loads((mp / ".brainfs/status").read_text())["cache_dir"] == str(tmp_path / "rel-cache")
    writer = subprocess.Popen([sys.executable, "-c", "import sys\nf = open(sys.argv[1], 'w')\n"
                               "f.write('first\\n'); f.flush(); print('open', flush=True)\n"
                               "sys.stdin.readline(); f.write('second\\n'); f.close()",
                               str(mp / "notes" / "log.md")],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout.readline() == "open\n"
        line = one_error_line(cli("umount", str(mp), env=env))
        assert "is busy" in line and f"pid {writer.pid}" in line and "--force" in line, line
        assert is_mounted(mp)
        writer.stdin.write("go\n")
        writer.stdin.flush()
        assert writer.wait(timeout=30) == 0
    finally:
        if writer.poll() is None:
            writer.kill()
            writer.wait()
    r = cli("umount", str(mp), env=env)
    assert r.returncode == 0, r.stderr
    assert s3get(store, "notes/log.md") == b"first\nsecond\n"


def test_context_without_an_index_names_the_corpus_to_index(tmp_path: Path, env, corpus, store) -> None:
    _seed(store, tmp_path)
    r = cli("context", "plan the Kyoto trip", str(corpus), env=dict(env, BRAINFS_EMBEDDER="none"))
    assert r.returncode == 0, r.stderr
    assert f"brainfs index {corpus}`" in r.stderr and "s3://B/P" not in r.stderr, r.stderr


def test_forget_command_records_a_request(tmp_path: Path, env, corpus, store, mounter) -> None:
    """`brainfs forget PHRASE URL|MOUNTPOINT` writes a forget request dream and the index
    act on; an empty phrase or an empty prefix (a typo) is refused, writing nothing."""
    empty = CorpusURL(corpus.bucket, corpus.prefix + "-typo")
    line = one_error_line(cli("forget", "Kamakura", str(empty), env=env))
    assert "nothing to forget" in line or "empty" in line, line
    _seed(store, tmp_path)
    line = one_error_line(cli("forget", "  ", str(corpus), env=env))
    assert "empty phrase" in line
    r = cli("forget", "Kamakura beach", str(corpus), env=env)
    assert r.returncode == 0 and "brainfs dream" in r.stdout, r.stderr
    reqs = [o.path for o in store.list("forget")]
    assert len(reqs) == 1 and b"Kamakura beach" in store.get(reqs[0])[0]
    m = mounter(corpus)
    r = cli("forget", "Nakazakicho", str(m.mountpoint), env=env)
    assert r.returncode == 0, r.stderr
    m.stop()
    bodies = [store.get(o.path)[0] for o in store.list("forget")]
    assert len(bodies) == 2 and any(b"Nakazakicho" in b for b in bodies)
    assert not list(ObjectStore(empty, Config().override(endpoint_url=env["AWS_ENDPOINT_URL"])).list())


def test_remount_says_the_working_set_was_cached(tmp_path: Path, env, corpus, store, background) -> None:
    _seed(store, tmp_path)
    mp = tmp_path / "mnt"
    mp.mkdir()
    background.append(mp)
    r = cli("mount", str(corpus), str(mp), env=env)
    assert r.returncode == 0 and "files preloaded" in r.stdout, r.stdout + r.stderr
    _umount(mp, env)
    r = cli("mount", str(corpus), str(mp), env=env)
    assert r.returncode == 0 and "the working set was in the cache already" in r.stdout, r.stdout
    _umount(mp, env)

"""The command line's edges (issue 15): --version, help, verbosity, one-line errors, broken
pipes, defaults that fit the input, mistakes refused.

Every command runs as a user runs it: a subprocess of ``python -m brainfs.front.cli``, against
the real S3 server on loopback where a server is needed. The mount-side edges (helpers,
sd_notify, logs, interrupted import) are in ``test_cli_mount.py``.
"""

from __future__ import annotations

import json
import logging
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from brainfs.backend.config import Config
from brainfs.backend.store import ObjectStore
from brainfs.front.cli import build_parser

from helpers import CLI_TREE, one_error_line, upload_tree, write_tree

CLI = [sys.executable, "-m", "brainfs.front.cli"]

def run(*args: str, env: dict[str, str] | None = None, timeout: float = 120,
        **kw) -> subprocess.CompletedProcess:
    return subprocess.run([*CLI, *args], env=env, capture_output=True, text=True,
                          timeout=timeout, **kw)


@pytest.fixture
def base_env(tmp_path: Path) -> dict[str, str]:
    env = dict(os.environ, BRAINFS_CONFIG="/dev/null", BRAINFS_CACHE_DIR=str(tmp_path / "cache"),
               BRAINFS_EMBEDDER="none", BRAINFS_RECALL_WARMUP="0",
               BRAINFS_GLOBAL_GUIDE=str(tmp_path / "no-global-guide.md"))
    for k in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_PROFILE", "AWS_ENDPOINT_URL"):
        env.pop(k, None)
    return env


@pytest.fixture
def s3env(base_env: dict[str, str], cfg: Config) -> dict[str, str]:
    return dict(base_env, AWS_ENDPOINT_URL=cfg.endpoint_url or "")


# ----------------------------------------------------------------------------- help, version


@pytest.mark.unit
def test_version() -> None:
    r = run("--version")
    assert r.returncode == 0, r.stderr
    assert re.fullmatch(r"brainfs \d+\.\d+\S*\n", r.stdout), r.stdout


def _leaf_parsers(parser, path=()):
    """(command path, parser) of every command that runs something."""
    import argparse

    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        yield path, parser
        return
    for name, p in subs[0].choices.items():
        yield from _leaf_parsers(p, path + (name,))


@pytest.mark.unit
def test_every_argument_has_help_and_every_command_examples() -> None:
    leaves = list(_leaf_parsers(build_parser()))
    assert len(leaves) >= 14
    for path, p in leaves:
        for a in p._actions:
            if a.help is not None and a.help.startswith("==SUPPRESS=="):
                continue
            assert a.help, f"brainfs {' '.join(path)}: {a.dest} has no help text"
        assert p.epilog and p.epilog.startswith("examples:"), f"brainfs {' '.join(path)} has no examples"
        assert "brainfs" in p.epilog or "mount -t" in p.epilog


@pytest.mark.unit
def test_help_shows_defaults_and_examples() -> None:
    r = run("s3", "serve", "--help")
    assert r.returncode == 0
    assert "(default: 9000)" in r.stdout and "(default: 127.0.0.1)" in r.stdout
    assert "examples:" in r.stdout
    r = run("context", "--help")
    text = " ".join(r.stdout.split())
    assert "(default: 8000)" in text and "a quarter of the budget" in text
    r = run("sample", "--help")
    assert "(default: 7)" in r.stdout and "(default: demo)" in r.stdout


@pytest.mark.unit
@pytest.mark.parametrize("argv", [
    ["-v", "index", "s3://b/p"], ["index", "-v", "s3://b/p"], ["index", "s3://b/p", "-v"],
])
def test_verbose_before_or_after_the_command(argv: list[str]) -> None:
    args = build_parser().parse_args(argv)
    assert args.verbose == 1 and args.quiet == 0 and args.url == "s3://b/p"


@pytest.mark.unit
def test_quiet_and_log_format_after_the_command() -> None:
    args = build_parser().parse_args(["recall", "x", "s3://b/p", "-q", "--log-format", "json"])
    assert args.quiet == 1 and args.log_format == "json"
    args = build_parser().parse_args(["-q", "--log-format", "json", "recall", "x", "s3://b/p"])
    assert args.quiet == 1 and args.log_format == "json"
    args = build_parser().parse_args(["-vv", "mount", "s3://b/p", "/m"])
    assert args.verbose == 2


@pytest.mark.unit
def test_usage_errors_are_one_line() -> None:
    r = run("recall")
    line = one_error_line(r)
    assert r.returncode == 2 and "QUERY" in line and "--help" in line
    r = run("nosuchcommand")
    assert r.returncode == 2 and len(r.stderr.strip().splitlines()) == 1


# ----------------------------------------------------------------------------- logs


@pytest.mark.unit
def test_log_lines_are_key_value_not_dict_reprs() -> None:
    from brainfs.front import logfmt

    rec = logging.LogRecord("brainfs.mount", logging.INFO, __file__, 1, "ready: %s",
                            ({"check_s": 0.0067123, "preload_files": 159, "mode": "a b"},), None)
    line = logfmt.PlainFormatter().format(rec)
    assert line.endswith('ready: check_s=0.007 preload_files=159 mode="a b"'), line
    assert "{" not in line and "'" not in line
    rec2 = logging.LogRecord("brainfs.mount", logging.INFO, __file__, 1, "relist: %s after %.1fs",
                             ({"added": 1, "removed": 0}, 2.5), None)
    assert logfmt.PlainFormatter().format(rec2).endswith("relist: added=1 removed=0 after 2.5s")
    js = json.loads(logfmt.JSONFormatter().format(rec))
    assert js["level"] == "info" and js["logger"] == "brainfs.mount"
    assert js["preload_files"] == 159 and js["msg"].startswith("ready: check_s=")


@pytest.mark.unit
def test_log_file_is_rotated(tmp_path: Path) -> None:
    from brainfs.front import logfmt

    logfile = tmp_path / "mount.log"
    root = logging.getLogger()
    saved = (list(root.handlers), root.level)
    try:
        logfmt.setup(0, "text", logfile, max_bytes=2000, backups=2, default=logging.INFO)
        for i in range(200):
            logging.getLogger("brainfs.mount").info("line %d: %s", i, {"n": i})
        for h in root.handlers:
            h.flush()
    finally:
        for h in list(root.handlers):
            root.removeHandler(h)
            h.close()
        for h in saved[0]:
            root.addHandler(h)
        root.setLevel(saved[1])
    files = sorted(p.name for p in tmp_path.iterdir())
    assert files == ["mount.log", "mount.log.1", "mount.log.2"], files
    assert all(p.stat().st_size <= 2200 for p in tmp_path.iterdir())
    assert "line 199: n=199" in logfile.read_text()


# ----------------------------------------------------------------------------- context, recall


@pytest.mark.unit
def test_default_reserve_scales_with_the_budget() -> None:
    from brainfs.front.cli import default_reserve

    assert default_reserve(8000) == 2000
    assert default_reserve(2000) == 500
    assert default_reserve(100_000) == 2000
    assert default_reserve(1) == 0


@pytest.mark.unit
def test_context_small_budget_without_reserve(tmp_path: Path, base_env: dict[str, str]) -> None:
    tree = write_tree(tmp_path / "mem", CLI_TREE)
    r = run("context", "plan trip", "--dir", str(tree), "--budget", "2000", "--json", env=base_env)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["budget"] == 2000 and d["reserve"] == 500 and d["used"] <= 1500
    # The tree has no index: the hint is one that works for a directory.
    assert f"no search index in {tree}" in r.stderr and "--index FILE" in r.stderr, r.stderr
    # An explicit reserve is still checked.
    r = run("context", "plan trip", "--dir", str(tree), "--budget", "2000", "--reserve", "2000",
            env=base_env)
    assert "--reserve" in one_error_line(r)
    # a flag out of its range exits 2, as argparse's own errors do; so does a missing source
    assert r.returncode == 2, r.returncode
    r = run("context", "plan trip", "--budget", "800", "--reserve", "900", env=base_env)
    assert r.returncode == 2 and "exactly one of" in one_error_line(r), (r.returncode, r.stderr)


@pytest.mark.unit
@pytest.mark.parametrize("k", ["0", "-3", "two"])
def test_recall_k_must_be_positive(k: str, base_env: dict[str, str]) -> None:
    r = run("recall", "kyoto", "s3://memory/x", "-k", k, env=base_env)
    line = one_error_line(r)
    assert r.returncode == 2 and "-k" in line


@pytest.mark.unit
@pytest.mark.parametrize("where", [["s3://memory/x"], ["--mount", "/nonexistent-mount"]])
def test_recall_empty_query_is_an_error_in_both_forms(where: list[str], base_env: dict[str, str]) -> None:
    r = run("recall", "", *where, env=base_env)
    assert "empty query" in one_error_line(r)
    r = run("recall", "   ", *where, env=base_env)
    assert "empty query" in one_error_line(r)


@pytest.mark.s3
def test_recall_k_is_honoured_in_text_mode(s3env: dict[str, str], corpus, store) -> None:
    upload_tree(store, write_tree(Path(s3env["BRAINFS_CACHE_DIR"]).parent / "src", CLI_TREE))
    r = run("index", str(corpus), "--no-embed", env=s3env)
    assert r.returncode == 0, r.stderr
    for k in (1, 2):
        r = run("recall", "Kyoto", str(corpus), "-k", str(k), env=s3env)
        assert r.returncode == 0, r.stderr
        assert len(re.findall(r"^- `", r.stdout, re.M)) == k, r.stdout
        assert f"{k} passage" in r.stdout
        r = run("recall", "Kyoto", str(corpus), "-k", str(k), "--json", env=s3env)
        assert len(json.loads(r.stdout)["cards"]) == k


# ----------------------------------------------------------------------------- errors


@pytest.mark.unit
@pytest.mark.parametrize("endpoint", ["localhost:9331", "127.0.0.1:9000", "s3.example.com"])
def test_malformed_endpoint(endpoint: str, base_env: dict[str, str]) -> None:
    r = run("index", "s3://memory/x", env=dict(base_env, AWS_ENDPOINT_URL=endpoint))
    line = one_error_line(r)
    assert endpoint in line and "http://" in line and "https://" in line


@pytest.mark.s3
def test_https_against_plain_http_server(base_env: dict[str, str], cfg: Config) -> None:
    url = (cfg.endpoint_url or "").replace("http://", "https://")
    r = run("index", "s3://memory/x", env=dict(base_env, AWS_ENDPOINT_URL=url,
                                                BRAINFS_MAX_ATTEMPTS="1"))
    line = one_error_line(r)
    assert "TLS" in line and "http://" in line


@pytest.mark.unit
def test_unreachable_endpoint(base_env: dict[str, str]) -> None:
    from brainfs.backend.server import free_port

    url = f"http://127.0.0.1:{free_port()}"
    r = run("recall", "kyoto", "s3://memory/x", env=dict(base_env, AWS_ENDPOINT_URL=url,
                                                         BRAINFS_MAX_ATTEMPTS="1"))
    line = one_error_line(r)
    assert "cannot reach" in line and url in line


@pytest.mark.s3
def test_unknown_bucket(s3env: dict[str, str]) -> None:
    for args in (("index", "s3://no-such-bucket-15/p"), ("dream", "s3://no-such-bucket-15/p"),
                 ("recall", "x", "s3://no-such-bucket-15/p")):
        line = one_error_line(run(*args, env=s3env))
        assert "'no-such-bucket-15' does not exist" in line


@pytest.mark.unit
@pytest.mark.parametrize(("content", "expect"), [
    ('[{"conversation": {"session_1": [}}]', r"not valid JSON: .* at line 1, column \d+"),
    ('{"a": 1,\n "b": }', r"not valid JSON: .* at line 2, column \d+"),
    ('[{"sample_id": "c1", "qa": []}]', r"sample 1 \(c1\): 'conversation' is missing"),
    ("[1, 2]", r"sample 1 is a number"),
    ('"text"', r"expected a list of LoCoMo samples"),
    ('[{"conversation": {"session_1": [3]}}]', r"session_1 turn 1 is a number"),
    ('[{"conversation": {"session_1": []}, "qa": {"q": 1}}]', r"'qa' is an object"),
    ('[{"conversation": {"session_1": []}, "qa": [{"category": [1]}]}]', r"question 1 has category a list"),
    ('[{"conversation": {"session_1": []}, "qa": [{"category": 1}]}]', r"question 1 has no 'question' text"),
    ('[{"conversation": {"speaker_a": "A"}}]', r"the conversation has no sessions"),
    ("[]", r"no samples \(an empty list\): nothing to evaluate"),
])
def test_bad_eval_file(tmp_path: Path, base_env: dict[str, str], content: str, expect: str) -> None:
    f = tmp_path / "bad.json"
    f.write_text(content)
    line = one_error_line(run("eval", "locomo", str(f), "--no-wiki", env=base_env))
    assert str(f) in line
    assert re.search(expect, line), line


@pytest.mark.unit
def test_missing_eval_file(tmp_path: Path, base_env: dict[str, str]) -> None:
    line = one_error_line(run("eval", "locomo", str(tmp_path / "no.json"), env=base_env))
    assert "no.json" in line and "no such file" in line


@pytest.mark.unit
@pytest.mark.parametrize("argv", [
    ["--help"], ["mount", "--help"],
    ["context", "plan trip", "--dir", "{tree}", "--budget", "4000", "--json"],
])
def test_broken_pipe_is_quiet(tmp_path: Path, base_env: dict[str, str], argv: list[str]) -> None:
    """`brainfs … | head`: the reader goes away before the output is written."""
    tree = write_tree(tmp_path / "mem", CLI_TREE)
    argv = [a.replace("{tree}", str(tree)) for a in argv]
    r_fd, w_fd = os.pipe()
    os.close(r_fd)  # no reader at all: every write gets EPIPE
    try:
        p = subprocess.run([*CLI, *argv], env=base_env, stdout=w_fd, stderr=subprocess.PIPE,
                           text=True, timeout=120)
    finally:
        os.close(w_fd)
    assert "Error" not in p.stderr and "Traceback" not in p.stderr, p.stderr
    assert "Exception ignored" not in p.stderr
    assert p.returncode in (0, 141), p.stderr  # argparse drops a failed --help write itself


@pytest.mark.unit
def test_broken_pipe_through_head(tmp_path: Path, base_env: dict[str, str]) -> None:
    # Rules are admitted whole: 60 of ~1,500 bytes make a JSON answer well over the 64 KiB
    # a pipe buffers, so the writer meets the closed pipe.
    big = {f"rules/r{i:02d}.md": f"Rule {i}: " + "always cite the source of a claim. " * 40
           for i in range(60)}
    tree = write_tree(tmp_path / "mem", {**CLI_TREE, **big})
    cmd = " ".join([*CLI, "context", "'plan Kyoto trip'", "--dir", str(tree), "--json",
                    "--budget", "100000", "|", "head", "-c", "10"])
    r = subprocess.run(["bash", "-o", "pipefail", "-c", cmd], env=base_env, capture_output=True,
                       text=True, timeout=120)
    assert "BrokenPipe" not in r.stderr and "Traceback" not in r.stderr, r.stderr
    assert r.returncode == 141, r.stderr  # pipefail: the writer's SIGPIPE status, as for cat
    assert len(r.stdout) == 10


# ----------------------------------------------------------------------------- mistakes


@pytest.mark.s3
def test_writing_commands_refuse_an_empty_prefix(s3env: dict[str, str], corpus, store, cfg: Config) -> None:
    from brainfs.backend.keys import CorpusURL

    store.put("notes/a.md", b"---\ntype: fact\n---\n\nA fact.\n")
    empty = f"s3://{corpus.bucket}/nothing-here"
    for args in (("dream", empty, "--no-embed", "--no-index"), ("index", empty, "--no-embed"),
                 ("correct", "Mara moved to Osaka", empty)):
        line = one_error_line(run(*args, env=s3env))
        assert "holds no files" in line and "brainfs import" in line
    assert list(ObjectStore(CorpusURL.parse(empty), cfg).list()) == []  # nothing written


@pytest.mark.unit
def test_missing_config_file_is_an_error_either_way(tmp_path: Path, base_env: dict[str, str]) -> None:
    missing = tmp_path / "nope.toml"
    for env, args in ((dict(base_env, BRAINFS_CONFIG=str(missing)), ()),
                      (base_env, ("--config", str(missing)))):
        line = one_error_line(run(*args, "index", "s3://memory/x", env=env))
        assert str(missing) in line and "does not exist" in line


@pytest.mark.unit
@pytest.mark.parametrize("out", ["g.txt", "g", "nodir/g.png"])
def test_graph_output_is_checked_first(tmp_path: Path, base_env: dict[str, str], out: str) -> None:
    """`--out g.txt` is refused before any S3 request (no server here), in one line."""
    line = one_error_line(run("graph", "s3://memory/x", "--out", str(tmp_path / out), env=base_env))
    assert "--out" in line and (".png" in line or "does not exist" in line)


@pytest.mark.unit
def test_s3_serve_on_a_busy_port(tmp_path: Path, base_env: dict[str, str]) -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        r = run("s3", "serve", "--root", str(tmp_path / "s3"), "--port", str(port), env=base_env,
                timeout=60)
    line = one_error_line(r)
    assert f"127.0.0.1:{port}" in line and "--port" in line


@pytest.mark.unit
def test_demo_on_a_busy_port(tmp_path: Path, base_env: dict[str, str]) -> None:
    import socket

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        r = run("demo", "--port", str(port), env=base_env, timeout=60, cwd=tmp_path)
    line = one_error_line(r)
    assert f"port {port} is busy" in line and "--port" in line
    assert not (tmp_path / ".demo" / "s3.pid").exists()


def test_demo_refuses_a_non_empty_directory_before_starting(tmp_path: Path, base_env: dict[str, str]) -> None:
    """A non-empty mountpoint is said at once, before the server starts and the sample is
    written (the mount would refuse it at the end, leaving the server running)."""
    (tmp_path / "memory").mkdir()
    (tmp_path / "memory" / "mine.txt").write_text("mine\n")
    r = run("demo", env=base_env, timeout=60, cwd=tmp_path)
    line = one_error_line(r)
    assert "memory is not empty" in line and "brainfs demo DIR" in line, line
    assert not (tmp_path / ".demo" / "s3.pid").exists()
    assert (tmp_path / "memory" / "mine.txt").read_text() == "mine\n"


@pytest.mark.unit
def test_mount_options_declared_once() -> None:
    """Every mount option reaches mount(8)'s -o form from the one declaration
    (cli/options.py's MOUNT_OPTIONS); the daemon a background mount spawns gets the common
    options and --naive on its command line, the settings in its resolved config."""
    import argparse

    from brainfs.backend.keys import CorpusURL
    from brainfs.front.cli.mounting import MOUNT_OPTIONS, daemon_argv
    from brainfs.front.cli.mounthelper import parse_options

    given = ["-vv", "--log-format", "json", "--config", "/dev/null", "--cache-dir", "/c",
             "--preload-budget", "512M", "--preload-background", "--naive", "--allow-other",
             "--read-only", "--listing", "corpus"]
    args = build_parser().parse_args(["mount", "s3://bucket/p", "/mnt/m", *given])
    argv = daemon_argv(args, CorpusURL.parse("s3://bucket/p"), Path("/mnt/m"), notify_fd=7,
                       log_file=Path("/l"), config_fd=8)
    assert argv[3:9] == ["mount", "s3://bucket/p", "/mnt/m", "--foreground", "--config-fd", "8"]
    again = build_parser().parse_args(argv[3:])
    for dest in ("verbose", "log_format", "naive"):
        assert getattr(again, dest) == getattr(args, dest), dest
    for dest in ("config", "cache_dir", "preload_budget", "preload_background", "allow_other",
                 "read_only", "listing"):
        assert not getattr(again, dest), dest  # in the resolved config, not on the command line
    assert again.log_file == "/l" and again.notify_fd == 7 and again.config_fd == 8
    public = [o.flags for o in MOUNT_OPTIONS if o.kwargs.get("help") is not argparse.SUPPRESS]
    assert {f[0] for f in public} >= {"--cache-dir", "--read-only", "--listing", "--allow-other"}
    for o in MOUNT_OPTIONS:
        if o.kwargs.get("help") is argparse.SUPPRESS:
            with pytest.raises(ValueError):
                parse_options([f"{o.dest}=3"])
        elif o.is_switch:
            assert parse_options([o.dest])[0] == [o.flags[0]]
        else:
            assert parse_options([f"{o.dest}=x"])[0] == [o.flags[0], "x"]
    assert parse_options(["ro"])[0] == ["--read-only"]


@pytest.mark.unit
@pytest.mark.parametrize("k, said", [("0", "must be at least 1 (got 0)"), ("201", "must be at most 200 (got 201)")])
def test_recall_k_out_of_range_is_a_malformed_command_line(base_env: dict[str, str], k: str, said: str) -> None:
    # Both ends of the range answer alike: exit 2, the command's name, before any S3 request.
    r = run("recall", "x", "-k", k, "s3://memory/x", env=base_env)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert r.stderr.strip().startswith("brainfs recall: error: argument -k: " + said), r.stderr

"""The ``brainfs`` command line (a contract: scripts, tests and users rely on it).

Every command exits non-zero with one human-readable line on bad input. Long work shows a
progress bar on a terminal and stays quiet otherwise. ``-v``/``-q`` and ``--log-format``
are accepted before or after the command and reach the mount daemon.

One module per group of commands (each registers its own parsers): ``corpus`` (s3 serve,
import, import-sessions, sample, index), ``mounting`` (mount, umount, status, ls, demo),
``search`` (recall, context, eval), ``wiki`` (dream, correct, graph), ``agents`` (mcp);
``common`` holds what they share.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import textwrap
from pathlib import Path

from brainfs.backend.config import DEFAULT_ACCESS_KEY, DEFAULT_SECRET_KEY, ConfigError
from brainfs.backend.errors import BackendError
from brainfs.cache.local.errors import CacheError

from .. import logfmt
from . import agents, corpus, mounting, search, wiki
from .common import FlagError, HelpFormatter, Parser, UsageError, common_options, set_quiet, version
from .options import config_of, take_resolved_config
from .mounting import _daemon_pids, _target  # noqa: F401 - the tests' and tools' names
from .search import default_reserve  # noqa: F401 - the tests' name

# The mount helper (mount(8)'s arguments) and the daemon (for its MountError: it loads the whole
# mount) are imported where they are used: `brainfs --help` and `status` start without them.

log = logging.getLogger("brainfs")


class _VersionAction(argparse.Action):
    """``-V``: argparse's version action, the version looked up only when asked for (the
    package metadata takes 0.02 s to read, on every command's start)."""

    def __init__(self, option_strings: list[str], dest: str = argparse.SUPPRESS,
                 default: str = argparse.SUPPRESS, help: str | None = None) -> None:
        super().__init__(option_strings=option_strings, dest=dest, default=default, nargs=0,
                         help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        parser._print_message(f"brainfs {version()}\n", sys.stdout)
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (also what renders each command's --help)."""
    common = common_options(defaults=False)
    p = Parser(
        prog="brainfs",
        formatter_class=HelpFormatter,
        parents=[common_options(defaults=True)],
        description=textwrap.fill(
            "An agent's long-term memory as a filesystem over S3. A corpus is named "
            "s3://BUCKET/PREFIX; the endpoint comes from AWS_ENDPOINT_URL (unset: AWS), "
            "credentials from the standard AWS variables and AWS_PROFILE (default key pair "
            f"{DEFAULT_ACCESS_KEY}/{DEFAULT_SECRET_KEY} for the embedded server).", 88),
        epilog="examples:\n"
        "  brainfs demo                                 # everything on the embedded S3 server\n"
        "  brainfs import ./memory s3://memory/alice\n"
        "  brainfs mount s3://memory/alice ~/memory\n"
        '  brainfs recall "where did I meet Ana" --mount ~/memory\n'
        "  brainfs COMMAND --help                       # a command's options and examples\n\n"
        "every command and interface: docs/USAGE.md; how it works: docs/ARCHITECTURE.md; what a\n"
        "mount promises, each with its test: fs/SEMANTICS.md (in the source tree)",
    )
    p.add_argument("-V", "--version", action=_VersionAction, help="print the version and exit")
    sub = p.add_subparsers(dest="cmd", required=True, metavar="COMMAND")
    for group in (corpus, mounting, search, wiki, agents):
        group.register(sub, common)
    return p


def _silence_stdout() -> None:
    """After a broken pipe (``brainfs … | head``): point stdout at /dev/null so the
    interpreter's final flush does not fail again (the recipe of Python's signal docs)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass


#: Exit status after a broken pipe: what a process killed by SIGPIPE reports in a shell
#: (128 + 13), so `set -o pipefail` sees it as cat or grep would be seen; no message.
EXIT_BROKEN_PIPE = 128 + signal.SIGPIPE


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``brainfs`` command."""
    try:
        return _main(argv)
    except BrokenPipeError:
        # `brainfs … | head`: the reader is gone; stop quietly, as cat or grep would.
        _silence_stdout()
        return EXIT_BROKEN_PIPE


def mount_helper() -> None:
    """Console script ``mount.brainfs`` / ``mount.fuse.brainfs`` (see :mod:`.mounthelper`)."""
    from .mounthelper import mount_argv

    got = mount_argv(prog=os.path.basename(sys.argv[0]) or "mount.brainfs")
    sys.exit(got if isinstance(got, int) else main(got))


def _setup_logging(args: argparse.Namespace, verbosity: int) -> None:
    """Logging, set up once per process: to stderr, WARNING by default; a foreground mount
    (the daemon) logs INFO by default, to its rotated ``--log-file`` when it has one (size
    and backups from the config)."""
    daemon = args.cmd == "mount" and args.foreground
    log_file = Path(args.log_file) if daemon and args.log_file else None
    max_bytes, backups = 1024**2, 3
    if log_file is not None:
        try:
            cfg = config_of(args)  # a spawned daemon's: the one its parent resolved
            max_bytes, backups = cfg.mount.log_max_bytes, cfg.mount.log_backups
        except ConfigError:
            pass  # reported by the command itself
    logfmt.setup(verbosity, args.log_format, log_file, max_bytes=max_bytes, backups=backups,
                 default=logging.INFO if daemon else logging.WARNING)


def _main(argv: list[str] | None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and argv[0].startswith("s3://"):
        # mount.fuse's shape (`mount -t fuse.brainfs` runs `brainfs SOURCE DIR -o OPTS`).
        from .mounthelper import mount_argv

        got = mount_argv(argv, prog="brainfs")
        if isinstance(got, int):
            return got
        argv = got
    parser = build_parser()
    args = parser.parse_args(argv)
    verbosity = args.verbose - args.quiet
    set_quiet(verbosity < 0)
    try:
        take_resolved_config(args)
        _setup_logging(args, verbosity)
        rc = int(args.func(args) or 0)
        sys.stdout.flush()  # a broken pipe shows here, inside the handler below
        return rc
    except BrokenPipeError:
        raise
    except KeyboardInterrupt:
        print("\nbrainfs: interrupted", file=sys.stderr)
        return 130
    except FlagError as e:
        _fail(args, str(e))
        return 2
    except (UsageError, ConfigError, BackendError, CacheError) as e:
        return _fail(args, str(e))
    except Exception as e:  # noqa: BLE001 - one line for the user, the trace with -v
        from brainfs.fs.daemon import MountError

        if isinstance(e, MountError):
            return _fail(args, str(e))
        if args.verbose:
            raise
        if isinstance(e, OSError) and e.strerror:
            where = f"{e.filename}: " if e.filename else ""
            return _fail(args, f"{where}{e.strerror}")
        return _fail(args, f"{e or 'unexpected failure'} (run with -v for the details)")


def _fail(args: argparse.Namespace, message: str) -> int:
    """Print the one error line (and log it: a daemon's stderr is not its log)."""
    line = " ".join(message.split())
    if getattr(args, "cmd", None) == "mount" and getattr(args, "log_file", None):
        log.error("%s", line)
    try:
        print(f"brainfs: error: {line}", file=sys.stderr)
    except BrokenPipeError:
        pass
    return 1


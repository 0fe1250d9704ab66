"""The options that set a setting of the config (``backend.config.Config``), declared once.

Each names the field it sets: :func:`config_of` applies whatever the user gave on top of
defaults < file < environment, ``brainfs mount`` adds them to its parser, and mount(8)'s
``-o`` names them (``mounting.option_flag``). A background mount resolves its config once and
hands it to its daemon as it is (:func:`send_resolved_config`, :func:`take_resolved_config`);
only the options that set no setting (``--naive``) go on its command line. A default shown in
a help text is read from the config's field, so it cannot drift from what the code does.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from brainfs.backend.config import Config, ConfigError, parse_size, setting_fields


def size_arg(text: str) -> int:
    """argparse's type for a size: 256M, 2G, 1.5GiB or a number of bytes."""
    try:
        return parse_size(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def size_text(n: int) -> str:
    """A byte count as a person writes it: 256 MiB, 2 GiB, 512 KiB, 100 B."""
    for unit, scale in (("GiB", 1024**3), ("MiB", 1024**2), ("KiB", 1024)):
        if n >= scale:
            v = n / scale
            return f"{v:.0f} {unit}" if v == int(v) else f"{v:.1f} {unit}"
    return f"{n} B"


def default_of(name: str) -> Any:
    """The default of config field ``name``."""
    f = setting_fields()[name]
    if f.default is not dataclasses.MISSING:
        return f.default
    return f.default_factory()  # type: ignore[misc]


@dataclass(frozen=True)
class Option:
    """One command-line option: its flags, argparse's keywords, the config field it sets
    (None: it sets none), and whether a background mount passes it on to its daemon's
    command line (one that sets a setting reaches the daemon in the resolved config)."""

    flags: tuple[str, ...]
    kwargs: dict[str, Any] = field(default_factory=dict)
    setting: str | None = None
    to_daemon: bool = True

    @property
    def dest(self) -> str:
        """The attribute argparse stores it under."""
        return self.flags[0][2:].replace("-", "_")

    @property
    def is_switch(self) -> bool:
        return self.kwargs.get("action") == "store_true"

    def value(self, args: argparse.Namespace) -> Any:
        """What the user gave (None when not given; a switch given is True)."""
        got = getattr(args, self.dest, None)
        if self.is_switch:
            return True if got else None
        return got


#: The options of ``brainfs mount``. ``to_daemon`` False: the parent sets it itself, or it
#: only makes sense there; a setting's option reaches the daemon inside the resolved config.
MOUNT_OPTIONS: list[Option] = [
    Option(("--cache-dir",), dict(metavar="DIR", help="working-set directory (default: per corpus "
                                  "under $XDG_CACHE_HOME/brainfs or ~/.cache/brainfs)"),
           setting="cache_dir"),
    Option(("--preload-budget",), dict(
        type=size_arg, metavar="SIZE",
        help="bytes to preload at mount: 256M, 2G, 1.5GiB, or a number of bytes (default: "
             f"preload_budget_bytes in the config, {size_text(default_of('preload_budget_bytes'))})"),
           setting="preload_budget_bytes"),
    Option(("--preload-background",), dict(action="store_true",
                                           help="usable at once; the preload continues in the background"),
           setting="preload_in_background"),
    Option(("--foreground", "-f"), dict(action="store_true", help="stay in the foreground and log to "
                                        "stderr (for systemd and debugging)"), to_daemon=False),
    Option(("--naive",), dict(action="store_true",
                              help="benchmark baseline: every operation is a remote request, no cache")),
    Option(("--allow-other",), dict(action="store_true", help="let other users see the mount"),
           setting="allow_other"),
    Option(("--read-only",), dict(action="store_true",
                                  help="refuse writes (EROFS); close(2) then never waits for the daemon"),
           setting="read_only"),
    Option(("--allow-external-links",), dict(action="store_true",
                                             help="follow symbolic links whose target leaves the mount "
                                             "(absolute, or .. above its root); by default they are "
                                             "not followed (EPERM), as anyone who can write the "
                                             "bucket can plant one"),
           setting="allow_external_links"),
    Option(("--listing",), dict(choices=("working-set", "corpus"), default=None,
                                help="what ls/find/grep -r see: the local working set "
                                f"(default: listing in the config, {default_of('listing')}), or "
                                "every file of the corpus, fetched when read"),
           setting="listing"),
    Option(("--commit",), dict(choices=("close", "quiet"), default=None,
                               help="when a write becomes a version to upload: at each close, or at "
                               "fsync / after commit_idle_seconds of quiet, so that close(2) never "
                               f"waits for the daemon (default: commit in the config, "
                               f"{default_of('commit')}; see fs/SEMANTICS.md)"),
           setting="commit"),
    # Between a background mount and its daemon only.
    Option(("--notify-fd",), dict(type=int, help=argparse.SUPPRESS), to_daemon=False),
    Option(("--log-file",), dict(help=argparse.SUPPRESS), to_daemon=False),
    Option(("--config-fd",), dict(type=int, help=argparse.SUPPRESS), to_daemon=False),
]


def config_of(args: argparse.Namespace) -> Config:
    """The config (defaults < file < environment), overridden by the options this command
    has and the user gave (any command: ``mcp --read-only`` sets ``read_only`` too); in a
    background mount's daemon, the config its parent resolved (:func:`take_resolved_config`)."""
    resolved = getattr(args, "resolved_config", None)
    if resolved is not None:
        return resolved
    cfg = Config.load(Path(args.config) if getattr(args, "config", None) else None)
    return cfg.override(**{o.setting: o.value(args) for o in MOUNT_OPTIONS if o.setting})


def send_resolved_config(cfg: Config) -> int:
    """A pipe holding ``cfg`` as JSON for a daemon about to be spawned: returns its read
    end (for ``pass_fds`` and ``--config-fd``; the caller closes it once the child has it).

    A pipe, not a file: the config holds the key pair, and a pipe leaves nothing on disk
    nor in the process list. Its buffer (64 KiB on Linux) holds a config many times over
    (about 3 KiB), so writing it all before the child starts cannot block; a config that
    did not fit is refused rather than left to hang the mount.
    """
    data = cfg.to_json().encode()
    r, w = os.pipe()
    try:
        if len(data) > _PIPE_ROOM:
            raise ConfigError(f"the resolved config is {len(data)} bytes, too big to hand to "
                              f"the mount daemon (at most {_PIPE_ROOM})")
        os.write(w, data)
    except BaseException:
        os.close(r)
        raise
    finally:
        os.close(w)
    return r


#: What a pipe is sure to hold unread: Linux's default pipe buffer is 64 KiB (16 pages).
_PIPE_ROOM = 64 * 1024


def take_resolved_config(args: argparse.Namespace) -> None:
    """In a background mount's daemon (``--config-fd``): read the config its parent
    resolved and keep it as ``args.resolved_config``, which :func:`config_of` returns as it
    is. Neither the config file nor the environment is read again, so a file changed
    between the two cannot make the daemon differ from what its parent checked and said."""
    fd = getattr(args, "config_fd", None)
    if fd is None:
        return
    with os.fdopen(fd, "rb") as pipe:
        text = pipe.read().decode()
    args.resolved_config = Config.from_json(text)

"""``mount -t brainfs`` / fstab support: mount(8)'s arguments → ``brainfs mount``'s.

mount(8) runs ``/sbin/mount.TYPE SOURCE MOUNTPOINT [-sfnv] [-N NS] [-o OPTIONS]`` for a
filesystem type it does not know: ``mount.brainfs`` for ``-t brainfs``,
``mount.fuse.brainfs`` for ``-t fuse.brainfs`` (without that helper, ``mount.fuse`` runs
``brainfs SOURCE MOUNTPOINT -o OPTIONS`` from ``$PATH``, which :func:`brainfs.front.cli.main`
also accepts). Both helpers are console scripts of the package; mount(8) looks for them in
/sbin only, so link them there once::

    ln -s "$(command -v mount.brainfs)" /sbin/mount.brainfs
    ln -s "$(command -v mount.brainfs)" /sbin/mount.fuse.brainfs

An fstab line (root mounts at boot; ``_netdev`` waits for the network)::

    s3://memory/alice  /mnt/memory  brainfs  _netdev,endpoint_url=http://127.0.0.1:9000,cache_dir=/var/cache/brainfs  0  0

``-o`` options: ``ro``/``read_only``, ``allow_other``, ``cache_dir=DIR``,
``preload_budget=SIZE``, ``preload_background``, ``foreground``, ``config=FILE``,
``endpoint_url=URL`` (fstab mounts run with an empty environment: this replaces
``AWS_ENDPOINT_URL``), ``region=R``, ``profile=NAME`` (``AWS_PROFILE``), ``verbose``,
``quiet``; any other ``name=value`` whose name is a config setting sets it
(``cache_budget_bytes=4G``). The generic options mount(8) and systemd pass along (``rw``,
``defaults``, ``auto``, ``noauto``, ``user``, ``users``, ``nofail``, ``_netdev``, ``nosuid``,
``nodev``, ``exec``, ``noatime``, ``x-systemd.*``, ``comment=…``) are accepted and ignored;
anything else is an error, as mount-s3 and rclone refuse unknown options.

The mount command itself tells systemd when the mount is ready (``mounting.sd_notify``).
"""

from __future__ import annotations

import os
import sys

from brainfs.backend.config import SECTION_OF

from .mounting import option_flag

#: Generic mount options that mean nothing to a FUSE daemon (the kernel, mount(8), fuse
#: and systemd act on them before we run): accepted so an fstab line can carry them.
IGNORED = {"rw", "defaults", "auto", "noauto", "user", "nouser", "users", "owner", "group",
           "nofail", "_netdev", "nosuid", "suid", "nodev", "dev", "exec", "noexec", "atime",
           "noatime", "relatime", "norelatime", "strictatime", "nodiratime", "diratime",
           "async", "sync", "dirsync", "lazytime", "nolazytime", "loud", "silent", "mand",
           "nomand", "iversion", "noiversion", "default_permissions"}
IGNORED_PREFIXES = ("x-", "comment=", "fsname=", "subtype=", "helper=")


class OptionError(ValueError):
    """An -o option brainfs does not understand (one line)."""


def parse_options(opts: list[str]) -> tuple[list[str], dict[str, str]]:
    """``-o`` option strings → (``brainfs mount`` flags, environment to set)."""
    known = set(SECTION_OF)
    flags: list[str] = []
    env: dict[str, str] = {}
    for group in opts:
        for opt in (o.strip() for o in group.split(",")):
            if not opt:
                continue
            name, eq, value = opt.partition("=")
            key = name.replace("-", "_")
            if opt in IGNORED or opt.startswith(IGNORED_PREFIXES):
                continue
            # The mount command's own options, by their flag's name (declared once, in
            # cli/mounting.py); "ro" is mount(8)'s name for --read-only.
            spec = option_flag("read_only" if key == "ro" else key)
            if spec is not None and bool(eq) == spec[1]:
                flags += [spec[0], value] if spec[1] else [spec[0]]
            elif key in ("verbose", "debug") and not eq:
                flags.append("-v")
            elif key == "quiet" and not eq:
                flags.append("-q")
            elif key == "config" and eq:
                flags += ["--config", value]
            elif key in ("endpoint_url", "endpoint") and eq:
                env["AWS_ENDPOINT_URL"] = value
            elif key == "region" and eq:
                env["AWS_REGION"] = value
            elif key == "profile" and eq:
                env["AWS_PROFILE"] = value
            elif key in known and eq:
                env["BRAINFS_" + key.upper()] = value
            else:
                raise OptionError(f"unknown mount option {opt!r} (known: ro, allow_other, "
                                  "cache_dir=DIR, preload_budget=SIZE, preload_background, "
                                  "endpoint_url=URL, region=R, profile=NAME, config=FILE, "
                                  "verbose, quiet, or a config setting as name=value)")
    return flags, env


def mount_argv(argv: list[str] | None = None, prog: str | None = None) -> list[str] | int:
    """``mount.brainfs SOURCE MOUNTPOINT [-sfnv] [-N NS] [-o OPTIONS]`` → the arguments of
    ``brainfs mount`` (with the environment the options set applied to this process), or
    the exit code when there is nothing to mount (``-f``, ``--help``, a usage error)."""
    prog = prog or os.path.basename(sys.argv[0]) or "mount.brainfs"
    args = list(sys.argv[1:] if argv is None else argv)
    positional: list[str] = []
    opts: list[str] = []
    verbose = False
    i = 0
    while i < len(args):
        a = args[i]
        if a == "-o" and i + 1 < len(args):
            opts.append(args[i + 1])
            i += 2
            continue
        if a.startswith("-o") and len(a) > 2:
            opts.append(a[2:])
        elif a in ("-N", "-t") and i + 1 < len(args):
            i += 2  # a namespace or the type: mount(8) has acted on them already
            continue
        elif a.startswith("-") and len(a) > 1 and set(a[1:]) <= set("sfnvirw"):
            # -s sloppy, -f fake, -n no mtab, -v verbose (util-linux's helper flags)
            if "f" in a:
                return 0  # --fake: do everything but the mount
            verbose = verbose or "v" in a
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        else:
            positional.append(a)
        i += 1
    if len(positional) != 2:
        print(f"{prog}: error: usage: {prog} s3://BUCKET/PREFIX MOUNTPOINT [-o OPTIONS]",
              file=sys.stderr)
        return 2
    try:
        flags, env = parse_options(opts)
    except OptionError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 2
    os.environ.update(env)
    source, mountpoint = positional
    return ["mount", source, mountpoint, *flags, *(["-v"] if verbose else [])]

"""Which symbolic links a mount lets the kernel follow.

A link is an object ``NAME.brainfs-link`` that anyone who can write the bucket can put
there: another agent, a tool, a person. The kernel resolves a link's target in the caller's
namespace, so a planted ``/etc/hostname`` (or ``../../../home/me/.ssh/id_ed25519`` climbing
out of the mountpoint) would read and overwrite the host's files through ``cat`` and ``>``.
By default a mount therefore serves only links that stay in the tree, as sshfs's
``contain_symlinks`` does (an SFTP server is as untrusted as a shared bucket): one whose
target leaves it is still listed as a link (``ls``, ``lstat``, ``rm`` and ``mv`` work), but
``readlink`` of it, and so every path through it, is ``EPERM``, and ``ln -s`` refuses to
make one. ``--allow-external-links`` (``allow_external_links``) turns the check off for a
bucket only trusted writers reach. (rclone's ``--links`` and s3fs hand the kernel any
target; mountpoint-s3 and goofys have no links at all.)

A target stays in the tree when it is relative, its leading ``..`` climb no higher than the
tree's root from the link's folder, and no ``..`` follows a name. The last rule is what
makes the check sound without resolving anything: the kernel takes ``..`` after a name
from where that name led, so with ``d/up -> ..`` the target ``up/../x`` of ``d/out`` is the
mountpoint's parent's ``x``, while its text, normalised, reads ``d/x``. Leading ``..`` are
safe, because the kernel takes them from the link's own folder, a real directory of the
tree; every name after them is in the tree or a link checked the same way when followed.
The check runs at every ``readlink`` against the link's current path (the kernel does not
cache targets here), so a link moved to a shallower folder where its ``..`` would climb out
is refused from then on.
"""

from __future__ import annotations

import logging

from brainfs.backend.keys import link_name

from .errors import NotPermitted

log = logging.getLogger("brainfs.fs")


def stays_inside(path: str, target: bytes) -> bool:
    """Whether the link at tree path ``path`` (its own name, not its object's) to
    ``target`` resolves inside the tree (see the module docstring). An empty target is
    let through: the kernel refuses to follow it itself."""
    if not target:
        return True
    if target.startswith(b"/"):
        return False
    depth = path.count("/")  # the folders above the link: "a/b/l" is 2 deep
    up, named = 0, False
    for part in target.split(b"/"):
        if part in (b"", b"."):
            continue
        if part == b"..":
            if named:
                return False
            up += 1
        else:
            named = True
    return up <= depth


class LinkPolicy:
    """The mount's rule for links (``allow_external`` off: only links that stay inside)."""

    def __init__(self, allow_external: bool) -> None:
        self.allow_external = allow_external
        #: links refused so far, each logged once (a script may follow one in a loop)
        self._warned: set[tuple[str, bytes]] = set()

    def check_follow(self, obj: str, target: bytes) -> None:
        """Refuse (NotPermitted: EPERM) to hand the kernel the target of the link kept
        in object ``obj`` when it leaves the tree."""
        path = link_name(obj)
        if self.allow_external or stays_inside(path, target):
            return
        if (path, target) not in self._warned:
            self._warned.add((path, target))
            log.warning("link %s -> %r leaves the mount: not followed (EPERM); "
                        "--allow-external-links follows such links", path,
                        target.decode("utf-8", "replace"))
        raise NotPermitted(f"link {path} leaves the mount")

    def check_create(self, path: str, target: bytes) -> None:
        """Refuse (EPERM) to make the link ``path`` to a target that leaves the tree."""
        if not self.allow_external and not stays_inside(path, target):
            raise NotPermitted(f"link {path} -> {target!r} would leave the mount "
                               "(--allow-external-links allows it)")

"""Whether a file's ``lstat`` can be trusted to show a change the moment it is made.

Local file systems answer from the inode itself. Network ones (NFS, SMB, 9p, Ceph, FUSE
mounts such as sshfs) may answer from an attribute cache for up to a minute, while ``open``
checks with the server: a file changed on another machine can keep its old size and times.
The verdict cache of warm applies (``Tree.fingerprint``) is used only where the answer is fresh.
"""

from __future__ import annotations

import functools
import os

_CACHED_ATTRIBUTES = (
    "nfs", "cifs", "smb", "9p", "ceph", "glusterfs", "lustre", "gpfs", "afs", "beegfs", "fuse",
    "virtiofs", "vboxsf", "davfs",
)  # fmt: skip
MOUNTINFO = "/proc/self/mountinfo"


@functools.lru_cache(maxsize=64)
def stat_is_fresh(path: str) -> bool:
    """``path`` lies on a local file system. False where the mount table cannot be read (not
    Linux, or no /proc): then nothing is assumed."""
    try:
        with open(MOUNTINFO, encoding="utf-8", errors="surrogateescape") as table:
            lines = table.read().splitlines()
    except OSError:
        return False
    real, best, kind = os.path.realpath(path), "", None
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, after = left.split(), right.split()
        if len(fields) < 5 or not after:
            continue
        mount = _unescape(fields[4])
        inside = real == mount or real.startswith(mount.rstrip("/") + "/")
        if inside and len(mount) >= len(best):
            best, kind = mount, after[0]
    return kind is not None and not kind.startswith(_CACHED_ATTRIBUTES)


def _unescape(field: str) -> str:
    """The kernel writes a space, tab, newline or backslash in a mount point as octal."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field

"""What the tests of a full disk and a read-only .git share: whether this machine
lets them make a private mount namespace, and the source text of the full-disk
drivers' fill() and free() (scripts run in that namespace, on a small tmpfs at the
global ``mnt``; prepended to a driver's text, so the driver stays one file).
fill() takes every free block, free() gives them back."""

from __future__ import annotations

from pathlib import Path

FILL_AND_FREE = '''
import os


def fill():
    try:
        with open(os.path.join(mnt, "fill-%d" % len(os.listdir(mnt))), "wb", 0) as fh:
            while True:
                fh.write(b"\\0" * 4096)
    except OSError:
        pass


def free():
    for f in os.listdir(mnt):
        if f.startswith("fill-"):
            os.unlink(os.path.join(mnt, f))
'''


def can_unshare(tmp: Path, *, tmpfs: bool = False) -> bool:
    """Whether this machine lets a test make a private mount namespace (``unshare
    -rm``) with a read-only bind mount in it (and a tmpfs, with ``tmpfs``): the
    suite runs as root, where ``chmod a-w`` stops nothing."""
    import subprocess

    probe = tmp / ("ns-probe" if tmpfs else "ro-probe")
    probe.mkdir(exist_ok=True)
    mount = 'mount -t tmpfs -o size=1m tmpfs "$0" && ' if tmpfs else ""
    try:
        proc = subprocess.run(
            ["unshare", "-rm", "sh", "-c",
             mount + 'mount --bind -o ro "$0" "$0" && ! touch "$0/x" 2>/dev/null', str(probe)],
            capture_output=True, check=False, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0

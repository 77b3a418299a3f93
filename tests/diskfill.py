"""Source text for the full-disk drivers (scripts run in a private mount namespace,
on a small tmpfs at the global ``mnt``): fill() takes every free block, free()
gives them back. Prepended to a driver's text, so the driver stays one file."""

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

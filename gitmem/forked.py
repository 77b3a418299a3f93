"""Work on the other core: a forked child computes bytes and pipes them back.

Why this exists: two jobs use the second core of a small machine (the
embedding of a big pull's memories while it is replayed, projection/ahead.py;
the gate's scan of a big import, api/gating.py), and both must never hang or
harm the process that asked. So: Linux only, and only in a single-threaded
process (a fork copies locks that other threads held; macOS frameworks may
abort in a forked child); the child touches nothing it inherited but its end
of the pipe and leaves with ``os._exit`` (no clean-up handlers, no buffers of
the parent flushed twice); a child that fails, or does not answer in time, is
killed and its work done in the parent as if it had never been asked.
"""

from __future__ import annotations

import os
import select
import signal
import sys
import threading
import time
from collections.abc import Callable


def supported() -> bool:
    """Forking is cheap, safe and worth it here: Linux, a single-threaded process
    that may run on more than one CPU (a child on the same CPU only adds its memory
    and the second read of its input: ~7% slower at 100k). Threads that Python does
    not know of count too (numpy's BLAS pool, the tokenizer's), so the kernel's list
    of this process's tasks is asked."""
    if not sys.platform.startswith("linux") or threading.active_count() != 1:
        return False
    try:
        return len(os.sched_getaffinity(0)) > 1 and len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


def _die_with_parent(parent: int) -> None:
    """In the child: be killed when the parent dies (a hook runner's timeout kills
    it with SIGKILL), so no orphan keeps working or holds an inherited file lock."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != parent:  # it died before prctl took effect
        os._exit(1)


class Child:
    """A forked child running one piece of work that returns bytes."""

    def __init__(self, pid: int, fd: int) -> None:
        self._pid: int | None = pid
        self._fd = fd

    @classmethod
    def start(cls, work: Callable[[], bytes | None]) -> Child | None:
        """Fork a child that runs ``work`` and sends what it returns (None: nothing
        to send, the child fails); None when this process should not fork."""
        if not supported():
            return None
        r, w = os.pipe()
        parent = os.getpid()
        try:
            pid = os.fork()
        except OSError:
            os.close(r)
            os.close(w)
            return None
        if pid == 0:  # the child: never returns
            code = 1
            try:
                os.close(r)
                _die_with_parent(parent)
                out = work()
                if out is not None:
                    view = memoryview(out)
                    while view:
                        view = view[os.write(w, view):]
                    code = 0
            finally:
                os._exit(code)
        os.close(w)
        return cls(pid, r)

    def result(self, patience: float) -> bytes | None:
        """What the child sent, once it has left successfully; None if it failed
        or has not finished within ``patience`` seconds (it is then killed)."""
        if self._pid is None:
            return None
        chunks: list[bytes] = []
        deadline = time.monotonic() + patience
        poller = select.poll()  # not select.select: it fails for descriptors past 1023
        poller.register(self._fd, select.POLLIN)
        try:
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not poller.poll(left * 1000):
                    return None  # too slow: close() kills it
                block = os.read(self._fd, 1 << 20)
                if not block:
                    break
                chunks.append(block)
            _, status = os.waitpid(self._pid, 0)
            self._pid = None
            return b"".join(chunks) if status == 0 else None
        except OSError:
            return None
        finally:
            self.close()

    def close(self) -> None:
        """Stop the child if it is still running and release what it holds."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        if self._pid is not None:
            try:
                os.kill(self._pid, signal.SIGKILL)
                os.waitpid(self._pid, 0)
            except OSError:
                pass
            self._pid = None

"""gitmem/forked.py: a child on the other core never hangs, leaks or outlives the
process that asked. Each case runs in a fresh interpreter: forking is only allowed
in a single-threaded process, and pytest's own is not one."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forks on Linux only")


def _run(script: str) -> str:
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=False, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_the_child_sends_its_bytes_even_with_a_thousand_files_open() -> None:
    # select.select fails for a descriptor past 1023 (a long-lived MCP server has many).
    out = _run("""
import os, resource
from gitmem import forked
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4096), hard))
keep = [open(os.devnull) for _ in range(1100)]
child = forked.Child.start(lambda: b"x" * 3_000_000)
print(len(child.result(30)))
""")
    assert out == "3000000"


def test_a_slow_or_failing_child_is_killed_and_reaped() -> None:
    out = _run("""
import os, time
from gitmem import forked
slow = forked.Child.start(lambda: time.sleep(30) or b"late")
pid = slow._pid
t = time.monotonic()
print(slow.result(0.5), round(time.monotonic() - t) < 5)
try:
    os.waitpid(pid, os.WNOHANG)
    print("zombie")
except ChildProcessError:
    print("reaped")
bad = forked.Child.start(lambda: 1 / 0)
print(bad.result(30))
""")
    assert out.split("\n") == ["None True", "reaped", "None"]


def test_a_child_does_not_outlive_a_killed_parent() -> None:
    # A hook runner kills a slow hook with SIGKILL: its child must go too, not keep
    # working (and holding the locks it inherited).
    parent = subprocess.Popen([sys.executable, "-c", """
import time
from gitmem import forked
child = forked.Child.start(lambda: time.sleep(60) or b"")
print(child._pid, flush=True)
time.sleep(60)
"""], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    pid = int(parent.stdout.readline())
    parent.send_signal(signal.SIGKILL)
    parent.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return  # gone (reaped by init)
        with open(f"/proc/{pid}/stat") as fh:  # a zombie waiting for init counts as gone
            if fh.read().split(") ", 1)[1].startswith("Z"):
                return
        time.sleep(0.05)
    pytest.fail(f"the child {pid} outlived its parent")


def test_threads_python_does_not_know_of_forbid_forking() -> None:
    # A fork copies only the thread that forks: locks other threads held stay locked.
    out = _run("""
import ctypes, threading
from gitmem import forked
print(forked.supported())
# A thread of C's own (as numpy's BLAS pool or the tokenizer's): invisible to threading.
libc = ctypes.CDLL(None)
start = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p)(lambda _: libc.pause())
tid = ctypes.c_ulong()
libc.pthread_create(ctypes.byref(tid), None, start, None)
import time; time.sleep(0.2)
print(threading.active_count(), forked.supported(), flush=True)
import os; os._exit(0)  # the C thread never returns: leave without finalising
""")
    assert out.split("\n") == ["True", "1 False"]

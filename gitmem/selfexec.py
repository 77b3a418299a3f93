"""How git mem starts itself again in the background (the catch-up, the session-end
capture, the remote probe).

Why this exists: ``python -m`` puts the folder it starts in first on ``sys.path``, and
these jobs start in the work tree, so a cloned repository holding a
``gitmem/__init__.py`` would have its code run at the first session start, with no
one asking (a review, rev38b). ``-P`` (Python 3.11) leaves that folder out: the
installed git mem runs, as in the process that started the job.
"""

from __future__ import annotations

import sys


def argv(module: str, *args: str) -> list[str]:
    """The command line that runs ``python -m module args`` with this interpreter."""
    return [sys.executable, "-P", "-m", module, *args]

"""sha1, sha256 and blake2b without OpenSSL: the same digests, sooner.

Why this exists: ``hashlib`` loads OpenSSL's libcrypto (~2 ms) on import, and a
fresh ``git mem add`` hashes a few hundred bytes (an op id, a git object, the
gate's memo key). CPython's own implementations of these functions start at
once; where a build left them out, ``hashlib``'s are used.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from hashlib import blake2b, sha1, sha256
else:
    try:
        from _blake2 import blake2b
        from _sha1 import sha1

        try:
            from _sha2 import sha256  # Python 3.12+
        except ImportError:
            from _sha256 import sha256
    except ImportError:
        from hashlib import blake2b, sha1, sha256

__all__ = ["blake2b", "sha1", "sha256"]

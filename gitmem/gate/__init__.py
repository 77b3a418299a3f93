"""The write gate: what may enter the log.

A memory is pushed to every clone and pasted into every teammate's agent, so
before any op is written its text and fields are checked for
- secrets: detect-secrets (its plugins minus the two entropy detectors, which
  fire on every commit id and checksum) plus patterns for formats it has no
  plugin for and generic rules for shapes its plugins miss in free text:
  passwords in prose, command lines, config files, crypt hashes, key blocks;
- prompt-injection phrasing: instructions aimed at an agent, in English and
  twelve other languages, fake role or system markers, look-alike
  ``</git-mem-context>`` fences, exfiltration requests; matched on a folded
  form of the text (NFKC, look-alike letters, leetspeak, letter-spacing,
  base64 or hex payloads decoded);
- invisible or direction-changing Unicode: every default-ignorable code point
  and control character, bar the joiners and selectors that writing needs.

``scan(text)`` returns findings that name the kind and where it is, never the
secret itself; ``redact(text)`` masks what the secret detectors found, whole
key blocks included. The figures: ``python benchmarks/gate.py``. detect-secrets
costs ~120 ms to import, so it is imported only here, only for a text with a
keyword or a long token in it: never on the read path.

The package, one module per job: ``fold`` (the folded text rules match on),
``secrets``, ``injection``, ``unicode`` (the three scanners), ``finding``,
``secret_rules`` (the secret rules as data; ``formats``, the vendor formats among
them), ``languages`` (the injection rules for other languages), ``judges`` (whether a rule's value
is a credential), ``shapes`` (secrets that need no keyword), ``plugins``
(detect-secrets, run only where it can match), ``redaction``, ``naturalness``
(whether a token is machine-made: a learned table), ``prefilter`` (skips a rule
a text cannot match), ``programs`` (compiled patterns, kept between processes).
"""

from __future__ import annotations

import functools
import re
import sys
from pathlib import Path
from typing import Any

from . import programs
from .finding import Finding
from .fold import _FOLD, _IGNORABLE, _LOOKALIKES, DEFAULT_IGNORABLE, plain, skeleton
from .injection import scan_injection
from .plugins import PLACEHOLDER_VALUE
from .redaction import redact, redaction_leftovers
from .secrets import DOCUMENTED_EXAMPLES, EXTRA_COMPILED, scan_secrets
from .shapes import key_block_spans
from .unicode import scan_unicode, unicode_violation_positions, unicode_violations


# Bump when any rule here changes: cached verdicts of older versions are redone.
GATE_VERSION = 28


def version() -> str:
    """This gate's rules and the scanner's version, without importing the scanner."""
    return f"gate-{GATE_VERSION}/detect-secrets-{_scanner_version()}"


@functools.cache
def _scanner_version() -> str:
    """detect-secrets' version, read from its ``__version__.py`` beside the package
    (importlib.metadata walks every installed distribution: ~60 ms of every add)."""
    try:
        spec = _find_spec("detect_secrets")
        if spec is not None and spec.origin:
            text = Path(spec.origin).with_name("__version__.py").read_text(encoding="utf-8")
            found = re.search(r"""^VERSION\s*=\s*['"]([^'"]+)['"]""", text, re.M)
            if found:
                return found.group(1)
    except (OSError, ImportError, ValueError):
        pass
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        return dist_version("detect-secrets")
    except PackageNotFoundError:
        return "none"


def _find_spec(name: str) -> Any:
    """``importlib.util.find_spec(name)`` for a top-level module, asked of the finders
    the import system holds already (importing importlib.util costs ~0.2 ms of
    every command that replays an op)."""
    module = sys.modules.get(name)
    if module is not None:
        return getattr(module, "__spec__", None)
    for finder in sys.meta_path:
        find = getattr(finder, "find_spec", None)
        spec = find(name, None) if find is not None else None
        if spec is not None:
            return spec
    return None


def scan(text: str, limit: int | None = None) -> list[Finding]:
    """Every reason ``text`` may not enter the log (empty: it may); ``limit``: the
    first that many of them only (the secrets are then looked for only until there
    are enough: scan_secrets).

    Never raises: a text a rule fails on (a bug) is itself a reason, so the op is
    refused or quarantined, and a teammate's memory cannot make every clone's
    replay fail (a review: a table header above a line with a comma did)."""
    try:
        findings = scan_unicode(text) + scan_injection(text)
        if limit is not None and len(findings) >= limit:
            return findings[:limit]
        findings += [f for f, _ in scan_secrets(text, None if limit is None
                                                 else limit - len(findings))]
        return findings
    except Exception as exc:  # noqa: BLE001 - whatever a rule raises on a hostile text
        return [Finding("gate", f"unreadable: {type(exc).__name__}", 1, 0)]


__all__ = [
    "GATE_VERSION", "version", "scan", "Finding", "redact", "redaction_leftovers",
    "scan_secrets", "scan_injection", "scan_unicode", "unicode_violations",
    "unicode_violation_positions", "plain", "skeleton", "key_block_spans",
    "DEFAULT_IGNORABLE", "DOCUMENTED_EXAMPLES", "EXTRA_COMPILED", "PLACEHOLDER_VALUE",
    "_FOLD", "_IGNORABLE", "_LOOKALIKES", "programs",
]

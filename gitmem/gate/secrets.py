"""Secrets: the scan that runs every secret detector on a text.

detect-secrets' plugins (``plugins``), the rules for formats and phrasings it
misses (``secret_rules``, their values judged by ``judges``), and the shapes that
need no keyword (``shapes``: key blocks, random tokens, generated passwords,
credential columns); a finding on a documented example, a filler or an
encrypted value is dropped. ``redaction`` masks what this finds.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

from . import prefilter, programs
from .finding import Finding, _line_col
from .judges import _FILLER, VALUE_JUDGES
from .lazyre import lazy
from .plugins import _needs_detect_secrets, _scan_with_detect_secrets
from .secret_rules import _KW, _PW_WORDS, EXTRA_PATTERNS
from .shapes import (generated_password_spans, joined_literal_spans, key_block_spans, random_token_spans,
                     split_secret_spans, table_cell_spans)


class _Compiled(list):  # type: ignore[type-arg]
    """EXTRA_PATTERNS compiled on first use: compiling them costs ~10 ms, and a
    text with no keyword and no long token never needs them."""

    def __iter__(self):  # type: ignore[no-untyped-def]
        if not len(self):
            self.extend((name, re.compile(rx), why) for name, rx, why in EXTRA_PATTERNS)
        return super().__iter__()


EXTRA_COMPILED = _Compiled()

# Exact public values published as examples by their vendors: replaced before scanning, so a
# note quoting the docs passes while anything else of the same shape is still refused.
DOCUMENTED_EXAMPLES = (
    "AKIAIOSFODNN7EXAMPLE",                                    # AWS docs access key id
    "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",                # AWS docs secret access key
    "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9lIiwi"
    "aWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",  # jwt.io sample
    "sk_test_4eC39HqLyjWDarjtT1zdp7dc",                        # Stripe docs test key
)

# Every rule below needs one of these (a mnemonic of words has no digit: its own words).
_MAYBE_SECRET = lazy(
    r"(?i)\d|[$%@<]|pass|assword|secret|token|key|auth|pwd|\bpw\b|cred|login|seed|codes?\b|community|mnemonic"
    r"|phrase|wallet|-[uw]\s|--user", guard=True)  # (every position; the guard halves it: 15 -> 7 us a turn)
# Its first branches alone, as one class: most texts hold a digit, found by a
# quick scan where the alternation tries every branch at every position (~10 us a line).
_DIGIT_OR_SYMBOL = lazy(r"[\d$%@<]")
# ... and in a text beyond ASCII, the word for a password or a key in other languages and
# scripts (a passphrase of words has no digit and no symbol: the word is all there is).
_MAYBE_SECRET_WORLD = lazy(rf"(?i){_PW_WORDS}|{_KW}")


# What a rule's value needs, found with one quick scan where the rule tries its key words
# and prefixes at every word (keyword-assignment: ~25 us a note). keyword-assignment's value
# (secret_rules._VALUE) is 8 or more characters of [^\s"'`<>{}] with 4 changes of class or
# upper case, lower case and a digit in it: its run of such characters holds a capital or a
# digit. Matched from the start of each run, possessively: linear on any text.
_NEEDS = {
    "keyword-assignment": lazy(r"(?<![^\s\"'`<>{}])(?=[^\s\"'`<>{}]{8})[^\s\"'`<>{}A-Z\d]*+[A-Z\d]"),
}


@functools.cache
def _extra_factors() -> prefilter.Present:
    from .factors import SECRETS

    patterns = [rx for _, rx, _ in EXTRA_PATTERNS]
    return prefilter.Present(prefilter.factors_for(patterns, SECRETS), prefilter.also_for(patterns, SECRETS))


@functools.cache
def _guards() -> list[str | None]:
    from .factors import SECRETS

    return prefilter.guards_for([rx for _, rx, _ in EXTRA_PATTERNS], SECRETS)


@functools.cache
def _rule(i: int) -> re.Pattern[str]:
    """Rule ``i`` compiled on first use: a text usually lacks most rules' literals,
    so a one-shot process compiles a few of them, not all ~60 (~30 ms). Its
    first-character guard in front (prefilter.first_guard): the same matches."""
    return programs.compile(prefilter.guarded(EXTRA_PATTERNS[i][1], _guards()[i]))


def scan_secrets(text: str, limit: int | None = None
                 ) -> list[tuple[Finding, tuple[int, int] | None]]:
    """Secret findings, each with the (start, end) span of the value when known.
    ``limit``: the first that many only (always the first of the whole list), looked
    for detector by detector: a teammate's 16 KB of "password = <token>" lines made
    every clone's replay find all 1,700 of them (~7 ms a KB), where the op's verdict
    names three."""
    for value in DOCUMENTED_EXAMPLES:  # blanked with spaces: offsets stay true
        text = text.replace(value, " " * len(value))
    generated: list[tuple[Finding, tuple[int, int] | None]] = [
        (Finding("secret", "generated-password", *_line_col(text, start)), (start, end))
        for start, end in generated_password_spans(text, scan_secrets)]  # they need no keyword
    if (not _DIGIT_OR_SYMBOL.search(text) and not _MAYBE_SECRET.search(text)
            and (text.isascii() or not _MAYBE_SECRET_WORLD.search(text))):
        return generated[:limit]  # no keyword, no digit, no symbol: no other pattern can fire
    kept = _Kept(text, limit)
    if kept.take(generated):
        return kept.out
    if _needs_detect_secrets(text) and kept.take(_scan_with_detect_secrets(text)):
        return kept.out
    for i in _extra_factors().indices(text):  # a rule whose literal is absent cannot match
        name = EXTRA_PATTERNS[i][0]
        needs = _NEEDS.get(name)
        if needs is not None and not needs.search(text):
            continue  # nor one whose value cannot be anywhere in the text
        judge = VALUE_JUDGES.get(name)
        if kept.take((Finding("secret", name, *_line_col(text, m.start())), (m.start(), m.end()))
                     for m in _rule(i).finditer(text) if judge is None or judge(m)):
            return kept.out
    for name, spans in (("random-token", random_token_spans),
                        ("secret-in-parts", split_secret_spans),
                        ("secret-in-literals", joined_literal_spans)):
        if kept.take([(Finding("secret", name, *_line_col(text, start)), (start, end))
                      for start, end in spans(text, scan_secrets)]):
            return kept.out
    for name, found in (("credential-column", table_cell_spans),
                        ("private-key-block", key_block_spans)):  # (a block: all of it secret)
        if kept.take([(Finding("secret", name, *_line_col(text, start)), (start, end))
                      for start, end in found(text)]):
            return kept.out
    return kept.out


class _Kept:
    """The findings kept, detector by detector, in order: those that are no stand-in
    (a placeholder, an encrypted value, a published test vector's line)."""

    def __init__(self, text: str, limit: int | None) -> None:
        self.text = text
        self.limit = limit
        self.out: list[tuple[Finding, tuple[int, int] | None]] = []
        self._around: tuple[list[tuple[int, int, bool]], list[tuple[int, int]]] | None = None

    def take(self, found: Iterable[tuple[Finding, tuple[int, int] | None]]) -> bool:
        """Keep ``found``'s findings that are no stand-in, read one at a time until the
        limit is reached: True then (``out`` holds exactly that many)."""
        for finding, span in found:
            if span is None or not self._stand_in(finding, span):
                self.out.append((finding, span))
                if self.limit is not None and len(self.out) >= self.limit:
                    return True
        return False

    def _stand_in(self, finding: Finding, span: tuple[int, int]) -> bool:
        if self._around is None:
            text = self.text
            # Once per text, not per finding (a search of its line per finding was
            # quadratic on one long line): values encrypted for a secret manager, and
            # the lines that say they hold a published test vector (RFC 6070's PBKDF2
            # ones): public by design.
            self._around = ([(m.start(), m.end(), m.group().startswith(("ENC[", "secure:")))
                             for m in _ENCRYPTED.finditer(text)],
                            [(m.end(), _line_end(text, m.end()))
                             for m in _TEST_VECTOR.finditer(text)])
        encrypted, vectors = self._around
        return _stand_in(self.text, span, encrypted,
                         vectors if finding.kind in _HEX_RULES else [])


def _line_end(text: str, at: int) -> int:
    end = text.find("\n", at)
    return end if end >= 0 else len(text)


# Values encrypted for a secret manager: sops and hiera-eyaml ENC[...], Pulumi's
# "secure: v1:...", a SealedSecret's encryptedData, an Ansible vault's body.
_ENCRYPTED = lazy(
    r"ENC\[[^\]]*\]?|\bsecure:\s*v1:\S+|\$ANSIBLE_VAULT;[^\n]*(?:\n[ \t]+[0-9a-f]+)*"
    r"|^([ \t]*)encryptedData:[^\n]*(?:\n\1[ \t]+[^\n]*)*"
    # an age file or PGP message (sops keeps its data key so): ciphertext for a key not here;
    # its body base64 lines only (armor headers aside), so nothing else hides inside
    r"|-----BEGIN (AGE ENCRYPTED FILE|PGP MESSAGE)-----\n(?:[ \t]*(?:Version|Comment|Hash|Charset):[^\n]*+\n)*+"
    r"(?:[ \t]*[A-Za-z0-9+/=]*+\n)*+[ \t]*-----END \2-----", re.M)


_TEST_VECTOR = lazy(r"(?i)\btest[ -]vectors?\b")

# The findings a published test vector can explain: bare hex after a key word. Never a
# vendor format, a key block or a password ("ghp_... (the test vector suite passes)").
_HEX_RULES = frozenset({"hex-near-key", "encryption-key-hex", "credential-word-hex", "Hex High Entropy String"})


def _stand_in(text: str, span: tuple[int, int], encrypted: list[tuple[int, int, bool]],
              vectors: list[tuple[int, int]]) -> bool:
    """The finding at ``span`` is a placeholder, lies in an ``encrypted`` value ((start,
    end, whether a finding that only ends inside it counts)) or on a line of ``vectors``
    (start, end), not a secret."""
    if _FILLER.search(text, span[0], span[1]):
        return True
    if any(start <= span[0] and span[1] <= end for start, end in vectors):
        return True
    return any(start <= span[0] + 1 and span[1] <= end + 1 or
               tail and start <= span[1] - 1 < end for start, end, tail in encrypted)


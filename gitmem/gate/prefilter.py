"""Literal prefilters: skip a regex on a text that cannot contain a match of it.

Why this exists: the gate runs ~100 regexes on every memory, on every write and
on every op a first build replays (100k ops at ~0.3 ms each is 30 s). Most
rules need a literal the text does not have ("aws", "sshpass", "-----BEGIN"):
from a pattern's parse tree we derive a set of strings one of which every match
must contain (the "required factors", as code-search engines do with trigrams),
and a rule whose factors are all absent from the text is not run at all.

Exact, not a heuristic: a factor set is derived only from parts every match
must pass through (a literal run, a repeat of at least one, every branch of an
alternation); anything else (classes, optional parts, lookarounds) yields no
factor, and a pattern with none is always run. Factors are compared in lower
case against an ASCII text in lower case; a non-ASCII text runs every rule,
since Unicode case folding can match a literal letter with another code point
(the Kelvin sign matches "k"). A non-ASCII factor ("пароль") is kept: it is
never in an ASCII text, unless one of its letters folds to ASCII ("ſ", the
Kelvin sign, dotted İ), in which case the rule has no factor and always runs.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterator
from typing import Any

from . import programs

# Python 3.11+ keeps the regex parser in re._parser (importing sre_parse warns).
sre_parse: Any = importlib.import_module("re._parser")

_LITERAL = sre_parse.LITERAL
_SUBPATTERN = sre_parse.SUBPATTERN
_BRANCH = sre_parse.BRANCH
_IN = sre_parse.IN
_REPEATS = {sre_parse.MAX_REPEAT, sre_parse.MIN_REPEAT,
            getattr(sre_parse, "POSSESSIVE_REPEAT", sre_parse.MAX_REPEAT)}
_ATOMIC = getattr(sre_parse, "ATOMIC_GROUP", None)

Factors = frozenset[str] | None  # None: no literal is required


def _better(a: Factors, b: Factors) -> Factors:
    """The more selective of two required-factor sets (both are valid)."""
    if a is None:
        return b
    if b is None:
        return a
    return a if min(map(len, a)) >= min(map(len, b)) else b


def _leading(items: Any) -> str:
    """The literal run a sequence starts with ("" if none)."""
    out = []
    for op, arg in items:
        if op is not _LITERAL:
            break
        out.append(chr(arg))
    return "".join(out)


# A literal stretch may fork at a class of a few single characters ("has(?:ł|l)o" parses as
# has[łl]o): its strings are then each choice joined on, up to this many.
_MAX_SPELLINGS = 16


def _class_chars(op: Any, arg: Any) -> list[str] | None:
    """The characters of a class made only of single literals ([łl]), else None."""
    if op is _IN and arg and all(o is _LITERAL for o, _ in arg):
        return [chr(a) for _, a in arg]
    return None


def _stretches(items: Any) -> Iterator[tuple[list[str], Any, Any]]:
    """The sequence ``items`` walked once: each node that is not a literal or a small
    class, with the strings the stretch of literals just before it can be ([""]: none),
    and a last (stretch, None, None). What _sequence and _every both read."""
    runs = [""]  # the strings the current literal stretch can be
    for op, arg in items:
        if op is _LITERAL:
            runs = [r + chr(arg) for r in runs]
            continue
        chars = _class_chars(op, arg)
        if chars is not None and len(runs) * len(chars) <= _MAX_SPELLINGS:
            runs = [r + c for r in runs for c in chars]
            continue
        yield runs, op, arg
        runs = [""]
    yield runs, None, None


def _sequence(items: Any) -> Factors:
    best: Factors = None
    for runs, op, arg in _stretches(items):
        if runs != [""]:
            best = _better(best, frozenset(runs))
            if op is _BRANCH:
                # The parser hoists a prefix all branches share (pass|pw is p(?:ass|w)): the
                # run joined to each branch's own leading literals is required as well.
                best = _better(best, frozenset(r + _leading(b) for r in runs for b in arg[1]))
        if op is not None:
            best = _better(best, _node(op, arg))
    return best


def _node(op: Any, arg: Any) -> Factors:
    if op is _SUBPATTERN:
        return _sequence(arg[-1])
    if _ATOMIC is not None and op is _ATOMIC:
        return _sequence(arg)
    if op is _BRANCH:
        found: set[str] = set()
        for branch in arg[1]:
            sub = _sequence(branch)
            if sub is None:
                return None  # one branch needs nothing: the alternation needs nothing
            found |= sub
        return frozenset(found)
    if op in _REPEATS:
        low, _high, item = arg
        return _sequence(item) if low >= 1 else None
    return None  # a class, any character, an anchor, a lookaround: no literal


def required(pattern: str) -> Factors:
    """Strings (lower case) one of which every match of ``pattern`` contains; None
    when the pattern requires no literal (it must always run)."""
    try:
        factors = _sequence(sre_parse.parse(pattern))
    except (re.error, RecursionError, TypeError, ValueError):
        return None
    if factors is None or not all(factors) or not all(map(_ascii_proof, factors)):
        return None  # a non-ASCII letter that folds to ASCII ("ſ" ~ "s") may match ASCII text
    return frozenset(f.lower() for f in factors)


def _every(items: Any, out: list[frozenset[str]]) -> None:
    """Every factor set a match of the sequence ``items`` must hold one of (what
    ``_sequence`` chooses its best from, and those of the parts it must pass through)."""
    for runs, op, arg in _stretches(items):
        if runs != [""]:
            out.append(frozenset(runs))
        if op is None:
            continue
        if op is _SUBPATTERN:
            _every(arg[-1], out)
        elif _ATOMIC is not None and op is _ATOMIC:
            _every(arg, out)
        elif op in _REPEATS and arg[0] >= 1:
            _every(arg[2], out)
        else:
            found = _node(op, arg)
            if found is not None:
                out.append(found)


def also_required(pattern: str) -> list[frozenset[str]]:
    """Factor sets every match of ``pattern`` must hold one of each, besides the one
    ``required`` gives ("u" or "user" and ":" or "=" and "p" or "pw" ...): a rule is
    run only when the text holds a factor of each set."""
    try:
        found: list[frozenset[str]] = []
        _every(sre_parse.parse(pattern), found)
    except (re.error, RecursionError, TypeError, ValueError):
        return []
    main = required(pattern)
    out: list[frozenset[str]] = []
    for fs in found:
        if not all(fs) or not all(map(_ascii_proof, fs)):
            continue
        low = frozenset(f.lower() for f in fs)
        if low != main and low not in out and all(f.isascii() for f in low):
            out.append(low)
    return out


def _ascii_proof(factor: str) -> bool:
    """No letter of ``factor`` can match an ASCII letter under IGNORECASE. Then a
    non-ASCII factor ("пароль", "키") is simply never in an ASCII text, and a
    non-ASCII text runs every rule anyway (see Present.runnable)."""
    return all(ch.isascii() or not any(c.isascii() for c in (ch.lower() + ch.upper()))
               for ch in factor)


class Present:
    """Which factors of a set of rules a text contains, each looked up once.

    A process that scans many texts (an import, a first build) finds them with one
    regex, a trie of every factor in a lookahead (~9 us a text instead of ~30 us for
    ~300 ``in`` tests); it costs ~6 ms to compile, so a one-shot ``git mem add``
    keeps to the ``in`` tests. Both give the same answer (see ``_found``)."""

    # Texts scanned with the ``in`` tests before the trie regex pays for its compile; and
    # the factors it takes for the trie to be faster than the ``in`` tests at all.
    COMPILE_AFTER = 64
    TRIE_FROM = 40

    def __init__(self, rules: list[Factors], also: list[list[frozenset[str]]] | None = None) -> None:
        self.rules = rules
        # Per rule, more sets it needs one factor of each (checked with ``in`` on the few
        # rules the first set lets run; a set with a non-ASCII factor is left out).
        self.also = {i: sets for i, sets in enumerate(also or []) if sets}
        self.always = [fs is None for fs in rules]
        self._always_idx = [i for i, fs in enumerate(rules) if fs is None]
        # Each factor an ASCII text can hold, and the rules it lets run (a non-ASCII
        # factor is never in an ASCII text; any other text runs every rule).
        users: dict[str, list[int]] = {}
        for i, fs in enumerate(rules):
            for f in fs or ():
                if f.isascii():
                    users.setdefault(f, []).append(i)
        self.users = sorted(users.items())
        self._calls = 0
        self._trie: re.Pattern[str] | None = None
        self._lets: dict[str, frozenset[int]] = {}

    def runnable(self, text: str) -> list[bool]:
        """Per rule: may it match ``text``? (False only when it cannot.)"""
        out = [False] * len(self.rules)
        for i in self.indices(text):
            out[i] = True
        return out

    def indices(self, text: str) -> list[int]:
        """The rules that may match ``text``, in order (the others cannot)."""
        if not text.isascii():
            return list(range(len(self.rules)))  # Unicode case folding: run everything
        low = text.lower()
        found = set(self._always_idx)
        if self._trie is None and (self._calls < self.COMPILE_AFTER or len(self.users) < self.TRIE_FROM):
            self._calls += 1
            for factor, rules in self.users:
                if factor in low:
                    found.update(rules)
        else:
            for factor in self._found(low):
                found |= self._lets[factor]
        also = self.also
        if also:
            return [i for i in sorted(found)
                    if i not in also or all(any(f in low for f in fs) for fs in also[i])]
        return sorted(found)

    def _found(self, low: str) -> set[str]:
        """The longest factor starting at each position of ``low`` where any does.
        Every factor ``low`` holds is a prefix of one of these: at a position where
        factor G starts, the trie's greedy match M also starts, and G and M both
        match there, so the shorter is a prefix of the longer, and the greedy match
        is the longer. So the rules a found factor lets run include those of every
        factor inside it (``_lets``)."""
        if self._trie is None:
            factors = [f for f, _ in self.users]
            self._trie = programs.compile(f"(?=({_trie_pattern(factors)}))") if factors else re.compile("(?!)")
            users = dict(self.users)
            self._lets = {f: frozenset(i for g in factors if g in f for i in users[g]) for f in factors}
        return set(self._trie.findall(low))


def _trie_pattern(words: list[str]) -> str:
    """One regex matching any of ``words``, shared prefixes factored out and longer
    continuations tried first (so a match is the longest word starting there)."""
    root: dict[str, Any] = {}
    for w in words:
        node = root
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict[str, Any]) -> str:
        keys = sorted(k for k in node if k)
        if not keys:
            return ""
        parts = [re.escape(k) + emit(node[k]) for k in keys]
        body = parts[0] if len(parts) == 1 else "(?:" + "|".join(parts) + ")"
        return f"(?:{body})?" if "" in node else body

    return emit(root)


def digest(patterns: list[str]) -> str:
    """What the stored factors were derived from (they are stale if this differs)."""
    from .. import hashes

    return hashes.sha256("\0".join(patterns).encode("utf-8")).hexdigest()[:16]


def factors_for(patterns: list[str], stored: dict[str, Any]) -> list[Factors]:
    """The rules' factors: from ``stored`` (gate/factors.py, written by
    ``scripts/gen_gate_factors.py``) when it was derived from exactly these
    patterns, else derived now (~20 ms: the same answer, only slower)."""
    if stored.get("digest") == digest(patterns):
        return [None if f is None else frozenset(f) for f in stored["factors"]]
    return [required(p) for p in patterns]


def also_for(patterns: list[str], stored: dict[str, Any]) -> list[list[frozenset[str]]]:
    """The rules' further factor sets (``also_required``): stored, or derived now."""
    if stored.get("digest") == digest(patterns) and "also" in stored:
        return [[frozenset(fs) for fs in sets] for sets in stored["also"]]
    return [also_required(p) for p in patterns]


def guards_for(patterns: list[str], stored: dict[str, Any]) -> list[str | None]:
    """The rules' first-character guards (``first_guard``): from ``stored`` when it was
    derived from exactly these patterns, else derived now (the same answer, slower)."""
    if stored.get("digest") == digest(patterns) and "guards" in stored:
        return list(stored["guards"])
    return [first_guard(p) for p in patterns]


# -- first characters: where a rule cannot start ------------------------------------------
#
# re tries a pattern at every position of a text. A rule that opens with an alternation of
# words ("\bsshpass|\bredis-cli|...", the key words of a password) or a long optional prefix
# tries every branch at every position; one class check of the characters a match can start
# with, ahead of it, fails most positions at once (command-line-password: 16 -> 6 us a note).
# Exact: the guard is derived from the parse tree as the union of every first character a
# match can consume (zero-width assertions skipped, a part that may be empty adding what
# follows it), and a pattern whose first character is not such a finite set (a negated
# class, \w, ".", a back-reference), or that can match empty, gets none. Case: a guard that
# holds a letter matched ignoring case is matched ignoring case (a superset of the letters
# matched exactly), with the same Unicode folding re uses for the rule itself.

_AT = sre_parse.AT
_ASSERTS = {sre_parse.ASSERT, sre_parse.ASSERT_NOT}
_RANGE = sre_parse.RANGE
_CATEGORY = sre_parse.CATEGORY
# The categories a guard may name, by their escapes (never a negated one: \D is narrower
# in Unicode than under ASCII, so a guard with it could miss what the rule matches).
_CATEGORIES = [sre_parse.CATEGORY_DIGIT, sre_parse.CATEGORY_SPACE, sre_parse.CATEGORY_WORD]
_CATEGORY_ESCAPES = ["\\d", "\\s", "\\w"]
_IGNORECASE = int(re.IGNORECASE)

# (character ranges, any of them matched ignoring case), or None: not a finite set
First = tuple[frozenset[tuple[int, int]], bool] | None


def _first(items: Any, flags: int) -> tuple[First, bool]:
    """What a sequence's first consumed character can be, and whether it can be empty."""
    ranges: set[tuple[int, int]] = set()
    fold = False
    for op, arg in items:
        if op is _AT or op in _ASSERTS:
            continue  # zero-width: the first character is still to come
        if op is _LITERAL:
            return (frozenset(ranges | {(arg, arg)}), fold or bool(flags & _IGNORECASE)), False
        if op is _IN:
            part: set[tuple[int, int]] = set()
            for o, a in arg:
                if o is _LITERAL:
                    part.add((a, a))
                elif o is _RANGE:
                    part.add((a[0], a[1]))
                elif o is _CATEGORY and a in _CATEGORIES:
                    part.add((-1, _CATEGORIES.index(a)))  # \d, \s, \w: kept as they are
                else:
                    return None, False  # a negated class, a negated category
            return (frozenset(ranges | part), fold or bool(flags & _IGNORECASE)), False
        if op is _SUBPATTERN:
            _group, add, drop, sub = arg
            got, empty = _first(sub, (flags | add) & ~drop)
        elif _ATOMIC is not None and op is _ATOMIC:
            got, empty = _first(arg, flags)
        elif op is _BRANCH:
            got, empty = (frozenset(), False), False
            for branch in arg[1]:
                one, one_empty = _first(branch, flags)
                if one is None:
                    return None, False
                got = (got[0] | one[0], got[1] or one[1])
                empty = empty or one_empty
        elif op in _REPEATS:
            low, _high, item = arg
            got, empty = _first(item, flags)
            empty = empty or low == 0
        else:
            return None, False  # any character, a category, a back-reference, a condition
        if got is None:
            return None, False
        ranges |= got[0]
        fold = fold or got[1]
        if not empty:
            return (frozenset(ranges), fold), False
    return (frozenset(ranges), fold), True


def _scans_fast(parsed: Any) -> bool:
    """re finds where ``parsed`` can start by itself: it opens with a literal or a class
    (re's own prefix scan, which a guard in front would turn off)."""
    compiler: Any = importlib.import_module("re._compiler")
    try:
        flags = parsed.state.flags
        prefix = compiler._get_literal_prefix(parsed, flags)[0]
        return bool(prefix) or compiler._get_charset_prefix(parsed, flags) is not None
    except (AttributeError, TypeError, ValueError):
        return False


def _escape(code: int) -> str:
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def first_guard(pattern: str, flags: int = 0) -> str | None:
    """A lookahead for the characters every match of ``pattern`` starts with, or None
    when there is no such finite set (then the pattern is run as it is)."""
    try:
        parsed = sre_parse.parse(pattern, flags)
    except (re.error, RecursionError, TypeError, ValueError):
        return None
    if parsed.state.flags & re.VERBOSE:
        return None  # (guarded() closes a group after the pattern: a comment could hide it)
    if _scans_fast(parsed):
        return None  # re already skips to where its leading literal or class is
    found, empty = _first(parsed, parsed.state.flags)
    if found is None or empty or not found[0]:
        return None
    ranges, fold = found
    body = "".join(_CATEGORY_ESCAPES[hi] if lo < 0 else _escape(lo) if lo == hi else f"{_escape(lo)}-{_escape(hi)}"
                   for lo, hi in sorted(ranges))
    return f"(?=(?{'i' if fold else '-i'}:[{body}]))"


_GLOBAL_FLAGS = re.compile(r"(?:\(\?[aiLmsux]+\))*")


def guarded(pattern: str, guard: str | None) -> str:
    """``pattern`` with ``guard`` put first (after its global flags, which must lead),
    the rest in a group so that the guard stands before each of its branches."""
    if guard is None:
        return pattern
    lead = _GLOBAL_FLAGS.match(pattern)
    at = lead.end() if lead else 0
    return f"{pattern[:at]}{guard}(?:{pattern[at:]})"

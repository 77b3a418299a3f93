"""Secrets: detect-secrets plus the shapes its plugins miss in free text.

Formats it has no plugin for, passwords in prose, command lines and config
files, crypt hashes and whole private-key blocks; ``redact`` masks what is
found (key blocks from BEGIN to END). detect-secrets costs ~120 ms to import,
so it is imported only here and only for a text with a keyword or a long token.
"""

from __future__ import annotations

import functools
import re
from typing import Any

from . import naturalness, prefilter
from .finding import Finding, _line_col
from .lazyre import lazy
from .secret_rules import EXTRA_PATTERNS


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

# KeywordDetector (quoted form) also fires on obvious placeholders.
PLACEHOLDER_VALUE = lazy(
    r"(?i)^(?:your[_-]?\w*|\w*[_-]here|replace[_-]?me|change[_-]?me|x{3,}|\*+|todo|tbd|"
    r"example|dummy|redacted|none|null|wrong|invalid|incorrect|bad|fake|mock|sample|placeholder)$")

# A secret manager's path (prod/payments/db) names a secret, it is not one.
_REF_PATH = lazy(r"^[a-z][a-z0-9_.-]*(?:/[a-z0-9_.-]+)+$")

# A password written in capitals is a placeholder (USER:PASSWORD@HOST).
_CAPS_WORD = lazy(r"[A-Z][A-Z_]*|(?i:password|passwd|pass|pwd|secret|changeme)")

# ...and on the name of the environment variable that holds the secret (password_env = "DB_PASSWORD").
ENV_VAR_NAME = lazy(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")

# A key block is masked whole, from its BEGIN line to its END line (to the end of the text
# when the END line is missing): the body is the secret, not the header.
_KEY_BEGIN = lazy(
    r"(-{4,5}) ?BEGIN ([A-Za-z0-9 ]*(?:PRIVATE|SECRET)[A-Za-z0-9 ]*|OpenVPN Static key V\d+) ?-{4,5}"
    r"|\bPuTTY-User-Key-File-\d+:")
_PUTTY_END = lazy(r"\bPrivate-(?:MAC|Hash): *[0-9a-fA-F]*")


def key_block_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of every private key block, END line (or the PuTTY MAC) included."""
    spans, pos = [], 0
    while m := _KEY_BEGIN.search(text, pos):
        if m.group(2):
            end_rx = re.compile(rf"-{{4,5}} ?END {re.escape(m.group(2))} ?-{{4,5}}")
        else:
            end_rx = _PUTTY_END
        end = end_rx.search(text, m.end())
        stop = end.end() if end else len(text)
        spans.append((m.start(), stop))
        pos = stop
    return spans



_DS: dict[str, Any] = {}
# detect-secrets plugins the gate leaves out: the entropy ones refuse ordinary hashes
# and ids, the IP one every public address.
UNUSED_PLUGINS = frozenset({"Base64HighEntropyString", "HexHighEntropyString", "IPPublicDetector"})


def _detect_secrets() -> dict[str, Any]:
    """detect-secrets, configured once per process (imported lazily: ~120 ms)."""
    if not _DS:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.core.scan import scan_line
        from detect_secrets.settings import Settings, cache_bust, configure_settings_from_baseline

        # The mapping's value type is an unbound TypeVar in detect-secrets' hints: name it here.
        classes: dict[str, type[Any]] = get_mapping_from_secret_type_to_class()
        plugins = sorted(c.__name__ for c in classes.values())
        drop = UNUSED_PLUGINS
        # `# pragma: allowlist secret` in a memory must not switch the gate off;
        # is_likely_id_string drops findings on any line with "_id" before the value, and
        # is_potential_uuid drops legacy npm tokens and every other UUID-shaped key.
        filters = [
            f for f in sorted(set(Settings().filters) - Settings.DEFAULT_FILTERS)
            if f not in ("detect_secrets.filters.allowlist.is_line_allowlisted",
                         "detect_secrets.filters.heuristic.is_likely_id_string",
                         "detect_secrets.filters.heuristic.is_potential_uuid")
        ]
        config = {"plugins_used": [{"name": n} for n in plugins if n not in drop],
                  "filters_used": [{"path": p} for p in filters]}
        # Configured once for the process (git mem owns detect-secrets' global
        # settings here; re-entering transient settings per text costs ~0.3 ms).
        cache_bust()
        configure_settings_from_baseline(config)
        _DS.update(scan_line=scan_line, config=config)
    return _DS


# Every detect-secrets plugin in use looks for a keyword in an assignment or a long
# token-like run; a line with neither cannot produce a finding, so it skips the scanner
# (~170 us a line) and its import (~120 ms) entirely. The cheaper patterns above run on any
# text with a digit, a symbol or a keyword.
_MAYBE_DS = lazy(
    r"://[^\s/@]*:|BEGIN|(?i:pass|pwd|secret|token|key|auth|cred|contrase)[\w.-]{0,40}[\"'\]]?\s*(?:[:=]|=>|!=)")
_LONG_TOKEN = lazy(r"[A-Za-z0-9+/_=.\-]{16,}")


def _needs_detect_secrets(text: str) -> bool:
    """A keyword in an assignment, a URL with a password, a key block, or a long token
    with a digit in it (found token by token: a lookahead per position is quadratic),
    where one of the scanner's plugins could match."""
    if not _MAYBE_DS.search(text) and not any(
            any(c.isdigit() for c in m.group()) for m in _LONG_TOKEN.finditer(text)):
        return False
    shapes = _plugin_shapes()
    if shapes is None:
        return True
    return any(_plugin_rule(i).search(text)
               for i, may in enumerate(shapes.runnable(text)) if may)


@functools.cache
def _plugin_rule(i: int) -> re.Pattern[str]:
    from .factors import DETECT_SECRETS

    pattern, flags = DETECT_SECRETS["patterns"][i]
    return re.compile(pattern, flags)


@functools.cache
def _plugin_shapes() -> prefilter.Present | None:
    """The plugins' own patterns (the keyword plugin's keywords), as gate/factors.py
    recorded them (None: recorded from another detect-secrets version, so the
    scanner runs as before).

    Why: a long token with a digit is common in notes (``docs/v2/api2024.md``,
    ``postgres-15.2-alpine``), and importing detect-secrets costs 60-120 ms of an
    add or a refresh. A plugin finds something only where one of its patterns
    matches the line, so a text none matches gives the same findings without
    the scanner (tests/test_gate_prefilter.py compares every corpus both ways)."""
    from . import _scanner_version
    from .factors import DETECT_SECRETS

    if DETECT_SECRETS["version"] != _scanner_version():
        return None
    # Each pattern is compiled only when a text holds one of its literals (~8 ms for all).
    return prefilter.Present([None if f is None else frozenset(f)
                              for f in DETECT_SECRETS["factors"]])


_MAYBE_SECRET = lazy(r"(?i)\d|[$%@<]|pass|secret|token|key|auth|pwd|\bpw\b|cred|login|seed|codes?\b|community")


@functools.cache
def _extra_factors() -> prefilter.Present:
    from .factors import SECRETS

    return prefilter.Present(prefilter.factors_for([rx for _, rx, _ in EXTRA_PATTERNS], SECRETS))


@functools.cache
def _rule(i: int) -> re.Pattern[str]:
    """Rule ``i`` compiled on first use: a text usually lacks most rules' literals,
    so a one-shot process compiles a few of them, not all ~60 (~30 ms)."""
    return re.compile(EXTRA_PATTERNS[i][1])


# A run of token characters long enough to be a credential.
_TOKEN_RUN = lazy(r"[A-Za-z0-9_+/=.-]{24,}")
# What such a run is when it is public: a hash or digest, a public key's body.
_PUBLIC_PREFIX = lazy(r"(?i)(?:sha\d+|h1|md5)[-:]|eyJ|AAAA[A-Za-z0-9+/]{8}|pk_(?:live|test)_|phc_")
_PUBLIC_BEFORE = lazy(
    r"(?i)(?:ssh-(?:rsa|ed25519|dss)|ecdsa-sha2-\S+|sk-ssh-\S+|sha(?:256|384|512)[-:]|h1:|@|base64,"
    r"|(?-i:\"(?:n|e|x|y)\"\s*:\s*\")|\bkid\b[^\n]{0,30}|\b(?:state|nonce)\b[^\n]{0,30}|sitekey=[\"']?"  # public JWK members, key ids
    # what the text says the token is: public, an id, a place in a listing
    r"|(?:\b|(?<=_))(?:public|pub|publishable|site)(?:[_ .-]?key)?(?:\b|(?=_))[\w .-]{0,24}?[\"']?\s*[:=]?|(?<!secret )(?<!secret-)\b(?:ids?|cursor|etag)[\"']?\s*[:=]?"
    r"|(?<![Ss]ecret)(?<![Ss]ecret_)(?-i:(?<=[a-z])I[Dd]s?|(?<=[a-z]_)ids?)[\"']?\s*[:=]?"  # SnapshotId, upload_id
    r"|\b(?:page|pagination|next|continuation|sync)[ _-]?token[\"']?\s*[:=]?)\s*[\"'`]?$")
# A vendor's short prefix before the random part (cus_, ord_, gsk_): object ids are
# short, so what is random must be 32 characters long on its own.
_HASH_PART = lazy(r"(?:^|[-_.])[0-9a-f]{32,}(?:$|[-_.])")
_ID_PREFIX = lazy(r"^[A-Za-z]{1,10}[_-]")
# One name of a dotted chain: CamelCase words, capitals, digits, joined by underscores.
_NAME_PART = lazy(r"(?:[A-Z]*[a-z]+(?:[A-Z][a-z]+)*|[A-Z]+[0-9]*|[0-9]+)(?:_(?:[A-Z]*[a-z]+(?:[A-Z][a-z]+)*|[A-Z]+[0-9]*|[0-9]+))*")
_PUBLIC_BLOCK = lazy(r"-----BEGIN (?:[A-Z0-9 ]+ )?(?:PUBLIC KEY|CERTIFICATE(?: REQUEST)?)-----")


def _switches(token: str) -> int:
    """How often the character class (upper, lower, digit, other) changes along ``token``."""
    def cls(ch: str) -> int:
        return 0 if ch.isupper() else 1 if ch.islower() else 2 if ch.isdigit() else 3
    classes = [cls(ch) for ch in token]
    return sum(1 for a, b in zip(classes, classes[1:]) if a != b)


def _encodes_text(token: str) -> bool:
    """``token`` is padded base64 of printable text with spaces in it and no secret of
    its own (a key decodes to random bytes; "user:password" has no space; a PEM
    key decodes to text the scan refuses)."""
    if not token.endswith("=") or len(token) % 4:
        return False
    import base64  # here: few texts hold a padded token (~0.3 ms of every scan's import)

    try:
        raw = base64.b64decode(token, altchars=b"-_", validate=True).decode("utf-8")
    except ValueError:  # binascii.Error and UnicodeDecodeError are ValueErrors
        return False
    if not any(ch.isspace() for ch in raw):
        return False
    if sum(ch.isprintable() or ch in "\n\t\r" for ch in raw) < 0.95 * len(raw):
        return False
    return not scan_secrets(raw)  # shorter each time: the recursion ends


# Bits per character (gate/naturalness.py) above which a token looks machine-made: words
# and names cost 2-4.5, keys and hashes 5.5-8.
_MADE_BY_A_MACHINE = 5.0
_NAME_PREFIX = lazy(r"[A-Za-z_][\w.-]*=")  # NAME=value: judge the value


def random_token_spans(text: str) -> list[tuple[int, int]]:
    """Spans of tokens that look machine-generated, whatever vendor made them: 32+
    random characters (after a short vendor prefix) of the URL-safe alphabet vendors use
    for tokens, with upper case, lower case and two digits, the class changing at least
    ten times. Standard base64 (with / or +: encoded data, paths; keys in it have rules
    of their own), hashes, digests, base64 of JSON, data URIs, URL paths, git ranges,
    publishable keys and public keys are left alone.
    (A run is found and then checked in Python: lookaheads per position are quadratic.)"""
    spans = []
    for m in _TOKEN_RUN.finditer(text):
        token, start = m.group(), m.start()
        name = _NAME_PREFIX.match(token)
        if name and len(token) - name.end() >= 16:  # NAME=value: the name is context, not token
            token, start = token[name.end():], start + name.end()
        core = _ID_PREFIX.sub("", token, count=1)
        if (len(core) < 32 or len(token) > 400 or ".." in token or "/" in token or "+" in token
                or sum(ch.isdigit() for ch in token) < 2
                or not any(ch.islower() for ch in token) or not any(ch.isupper() for ch in token)
                or _switches(token) < 10):
            continue
        if _PUBLIC_PREFIX.match(token) and token.count(".") < 2:
            continue  # sha512-..., h1:..., base64 of '{"', a public key's AAAA...
        if _HASH_PART.search(token):
            continue  # an id built on a hash (node-cache-Linux-x64-npm-<sha256>)
        if "." in token and all(_NAME_PART.fullmatch(p) for p in token.split(".")):
            continue  # a dotted chain of names (Prefs.PrefKeyEncryptionScheme.AES256_SIV)
        if token.startswith("pk.eyJ"):
            continue  # a Mapbox public token (its secret tokens start sk.)
        if _encodes_text(token):
            continue  # base64 of readable text with no secret in it: data, not a key
        if naturalness.bits_per_char(token) < _MADE_BY_A_MACHINE:
            continue  # names a person wrote (_Hd_Mp4_Hev1_Aac_16x9, Kernel32.WaitForSingleObject)
        word_start = max(text.rfind(" ", 0, start), text.rfind("\n", 0, start)) + 1
        if "://" in text[word_start:m.end()] or text[word_start:start].startswith("|1|"):
            continue  # a URL's path or query (secrets in URLs have rules of their own), known_hosts
        before = text[max(0, start - 40):start]
        if _PUBLIC_BEFORE.search(before):
            continue
        block = text.rfind("-----BEGIN ", 0, start)
        if block >= 0 and _PUBLIC_BLOCK.match(text, block) and "-----END" not in text[block:start]:
            continue
        spans.append((start, m.end()))
    return spans


# A generated password, the shapes password managers and generators print: groups of
# letters and digits joined by one separator ("jjvd-Xwfw-b6cl-LEq0"), or a token of
# letters, digits and symbols ("BMwL3!M8Me*VXu_AdYJ").
_GROUPED = lazy(r"(?<![\w.-])[A-Za-z0-9]{3,8}([-_])[A-Za-z0-9]{3,8}(?:\1[A-Za-z0-9]{3,8}){1,6}(?![\w-])")
_INNER_GROUP = lazy(r"[-_][A-Za-z0-9]{3,8}[-_]")  # a cheap test before _GROUPED
# A group a person would write: a word, a CamelCase word, all capitals, all digits.
# (And "CTask", "Math56a", "S08", "300ms".)
_WORDLIKE = lazy(r"[A-Z]*[a-z]+(?:[A-Z][a-z]+)*|[A-Z]+|[0-9]+"
                       r"|(?:[A-Z]?[a-z]+|[A-Z]+)[0-9]+[a-z]?|[0-9]+[A-Za-z]{1,3}")
# A run of token characters between white space, quotes, brackets and separators.
_BARE_TOKEN = lazy(r"[^\s\"'`()\[\]{}<>,;|:]{10,}")  # ":" too: user:password
_STRONG_SYMBOLS = frozenset("!#$%&*+=?@^~")
_TOKEN_SYMBOLS = _STRONG_SYMBOLS | frozenset("._-")
_BASE64_SYMBOLS = frozenset("+=")  # a piece of base64 (keys in base64 have rules of their own)
# Syntax, not a value: a regex class (A-Z, a-z, 0-9), a power (**), a token paste (##),
_SYNTAX = lazy(r"A-Z|a-z|0-9|\*\*|##|%[0-9A-F]{2}|=\?")  # %-escapes, =?MIME?=
_ARITHMETIC = frozenset("*+=")
# A run of letters and digits no word or name has inside it (zk7zQz, M8Me); an
# expression of names and numbers ("2*self.KL+1+i") has at most one kind of them.
_ODD_SEGMENT = lazy(r"[A-Za-z0-9]*(?:[a-z][A-Z]|[0-9][A-Za-z][0-9]|[A-Za-z][0-9][A-Za-z])[A-Za-z0-9]*")
_HAS_STRONG = lazy(r"[!#$%&*+=?@^~]")
_NAME_EQUALS = lazy(r"[A-Za-z_][A-Za-z_.-]*=")  # "name=value": judge the value
_WORD_DASH = lazy(r"[a-z]{3,12}-")  # "label-value"
_QUERY = lazy(r"[A-Za-z_]\w*=[^&=]*&[A-Za-z_]\w*=")  # a=1&b=2
_ESCAPE_END = lazy(r"(?:\\[rnt])+$")  # send "...\r" in an expect script
_EMAIL = lazy(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


def _symbol_rich(token: str) -> bool:
    """``token`` mixes upper case, lower case, digits and two or more kinds of symbol,
    two of them beyond the . _ - that names and versions use ("U@t*..P+%I5.Ak~L",
    "BMwL3!M8Me*VXu_AdYJ"), its class changing at least six times: what a password
    generator prints, and what people almost never write otherwise (a locale name
    "sr_RS.UTF-8@latin" or an expression "ctx.Emax-ctx.prec+1" has one). Not base64
    (only + and =), a query string (& and =), an address, a variable, a reference
    (~mod.Class) or a list item."""
    body = token.rstrip("=")  # base64 padding is not a symbol anyone chose
    symbols = {ch for ch in body if not ch.isalnum()}
    return (10 <= len(token) <= 64 and token.isascii() and len(symbols) >= 2
            and symbols <= _TOKEN_SYMBOLS and sum(ch in _STRONG_SYMBOLS for ch in body) >= 2
            and not symbols <= _BASE64_SYMBOLS and not _QUERY.search(token)
            and any(ch.isupper() for ch in token) and any(ch.islower() for ch in token)
            and any(ch.isdigit() for ch in token) and _switches(token) >= 6
            and not token.startswith(("$", "%", "&", "-", "+", "=", "*", "#", "@", ".", "~", "^"))
            and not _EMAIL.fullmatch(token) and not _encodes_text(token)
            and not _SYNTAX.search(body)
            and ("*" not in token or not symbols & _STRONG_SYMBOLS <= _ARITHMETIC
                 or len(set(_ODD_SEGMENT.findall(token))) >= 2))


def generated_password_spans(text: str) -> list[tuple[int, int]]:
    """Spans of values shaped like generated passwords, whatever word stands near them.

    Grouped: three or more groups, two or more with upper case and two with lower
    case (an advisory id GHSA-hxm8-2xgr-2p9m has one), and at least half the
    groups (two or more) unlike anything a person writes as a word
    ("GicC", "b6cl"): CamelCase names, UUIDs, product keys and k8s pod names are
    words, capitals or lower-case hex. Symbol-rich: see ``_symbol_rich``; quotes,
    brackets and a leading ``name=`` are not part of the value.
    """
    spans = []
    grouped = _GROUPED.finditer(text) if _INNER_GROUP.search(text) else ()
    for m in grouped:
        token = m.group()
        groups = token.split(m.group(1))
        odd = sum(1 for g in groups if not _WORDLIKE.fullmatch(g))
        upper = sum(1 for g in groups if any(ch.isupper() for ch in g))
        lower = sum(1 for g in groups if any(ch.islower() for ch in g))
        if odd >= 2 and 2 * odd >= len(groups) and upper >= 2 and lower >= 2:
            spans.append((m.start(), m.end()))
    bare = _BARE_TOKEN.finditer(text) if _HAS_STRONG.search(text) else ()
    for m in bare:
        start, token = m.start(), _ESCAPE_END.sub("", m.group())
        name = _NAME_EQUALS.match(token)
        if name:
            start, token = start + name.end(), token[name.end():]
        word = _WORD_DASH.match(token)
        if word and naturalness.bits_per_char(word.group()) < _NAME_BITS:
            start, token = start + word.end(), token[word.end():]  # nonce-..., sha256-...: a label
        if _symbol_rich(token):
            spans.append((start, start + len(token)))
    return spans


# A table's header cell that names a credential column: password, secret, token, API key, ...
_CREDENTIAL_HEADER = lazy(
    r"(?i)^[`*_]*(?:[\w .-]{0,20}[ _-])?(?:pass(?:word|wd|phrase)?|pwd|pw|secret|token|api[ _-]?key|apikey"
    r"|access[ _-]?key|secret[ _-]?key|private[ _-]?key|credentials?|creds?|pin|(?P<key>keys?))[`*_]*$")
_TABLE_LINE = lazy(r"^[ \t]*\|.*\|[ \t]*$|^[^\n,]{1,60}(?:,[^\n,]{0,200}){1,20}$")


def table_cell_spans(text: str) -> list[tuple[int, int]]:
    """Spans of values in a table's credential column: a Markdown or CSV header with a
    cell that names one (password, token, api key, ...), and below it, in that column,
    a value a person chose with a digit in it or a machine-made one (gate/naturalness.py).
    Placeholders, references and words pass (``*** ``, ``<vault>``, ``in 1Password``)."""
    if "|" not in text and "," not in text:
        return []
    spans: list[tuple[int, int]] = []
    lines = text.split("\n")
    offset, columns, sep = 0, None, ""
    for line in lines:
        if not _TABLE_LINE.match(line):
            columns = None
        elif columns is None:
            sep = "|" if line.strip().startswith("|") else ","
            cells = _cells(line, sep)
            found = [(i, bool(m.group("key"))) for i, (_, cell) in enumerate(cells)
                     if (m := _CREDENTIAL_HEADER.match(cell.strip()))]
            columns = found or None
        else:
            cells = _cells(line, sep)
            for i, just_key in columns:
                if i < len(cells):
                    start, cell = cells[i]
                    value = cell.strip().strip("`'\"")
                    if value and _a_credential(value, machine_made=just_key):
                        at = offset + start + cell.index(value)
                        spans.append((at, at + len(value)))
        offset += len(line) + 1
    return spans


def _cells(line: str, sep: str) -> list[tuple[int, str]]:
    """(start, text) of each cell of a table line."""
    out, start = [], 0
    if sep == "|":
        first = line.index("|")
        parts = line[first + 1:].split("|")[:-1]
        start = first + 1
    else:
        parts = line.split(",")
    for part in parts:
        out.append((start, part))
        start += len(part) + 1
    return out


def _a_credential(value: str, machine_made: bool = False) -> bool:
    """A cell's value is a credential: one token, not a placeholder or a reference, a
    letter and a digit, and chosen (a symbol beyond - _ . or mixed case) or machine-made
    (only machine-made under a header that just says "key": its cells may be names)."""
    if (not 6 <= len(value) <= 200 or any(ch.isspace() for ch in value) or set(value) <= set("-:| ")
            or _FILLER.search(value) or not any(ch.isdigit() for ch in value)
            or not any(ch.isalpha() for ch in value) or value[0] in "$<{%[(/~"
            or "://" in value or "..." in value or value.startswith(("env:", "vault:", "op:", "arn:"))):
        return False
    chosen = not machine_made and (any(not ch.isalnum() and ch not in "-_." for ch in value)
                                   or (value.lower() != value and value.upper() != value))
    return chosen or naturalness.bits_per_char(value) >= _MADE_BY_A_MACHINE


def _machine_or_chosen(m: re.Match[str]) -> bool:
    """A value after a keyword is a secret if a machine made it (4.5+ bits a character,
    gate/naturalness.py) or a person chose it with a digit in it; a name made of
    words (nextPageToken, Token.Name.Builtin, ConfirmLoginContinue) is neither. And
    a token that only marks a place or a request (a page token, an idempotency
    token) is not a credential."""
    value = m.group("value")
    if _NOT_A_CREDENTIAL.search(m.string, max(0, m.start() - 20), m.start("value")):
        return False
    return any(ch.isdigit() for ch in value) or naturalness.bits_per_char(value) >= _NAME_BITS


def _not_words_only(m: re.Match[str]) -> bool:
    """The value is more than words a person wrote (abc:xyz@, evil:thing@ are examples)."""
    return not _words_only(m.group("value"))


def _strong(m: re.Match[str]) -> bool:
    """A password someone chose to be strong: upper case, lower case and a digit, or a
    letter, a digit and a symbol; not a name, a host, a version or a path."""
    value = m.group("value")
    if _KEBAB.fullmatch(value) or "/" in value or "://" in value:
        return False  # eu-west-1, gpt-4o-mini, a path
    letters, digits = any(ch.isalpha() for ch in value), any(ch.isdigit() for ch in value)
    mixed = value.lower() != value and value.upper() != value
    symbol = any(ch in "!@#$%^&*?~+=" for ch in value)
    return letters and digits and (mixed or symbol) and naturalness.bits_per_char(value) >= 3.5


_KEBAB = lazy(r"[a-z0-9]+(?:[-_.][a-z0-9]+)+")


def _made_by_a_machine(m: re.Match[str]) -> bool:
    """The value costs 5+ bits a character (gate/naturalness.py): not a name or a word."""
    return naturalness.bits_per_char(m.group("value")) >= _MADE_BY_A_MACHINE


# Tokens that are not credentials: where a listing goes on, what makes a retry safe.
_NOT_A_CREDENTIAL = lazy(
    r"(?i)(?:page|pagination|next|continuation|sync|change|idempotency|client[ _-]?request"
    r"|resume|lock|cancel\w*|lifecycle[ _-]?action|work[ _-]?unit)[ _-]?token")


# Names cost 2-4.5 bits a character (identifiers of several words, about 3-4).
_NAME_BITS = 4.5
# Rules whose match holds a (?P<value>...) group, and what that value must be.
VALUE_JUDGES = {"keyword-assignment": _machine_or_chosen, "credential-call": _made_by_a_machine,
                "webhook-url": _made_by_a_machine, "credential-literal-in-call": _strong,
                "url-userinfo-password": _not_words_only}


def scan_secrets(text: str) -> list[tuple[Finding, tuple[int, int] | None]]:
    """Secret findings, each with the (start, end) span of the value when known."""
    for value in DOCUMENTED_EXAMPLES:  # blanked with spaces: offsets stay true
        text = text.replace(value, " " * len(value))
    out: list[tuple[Finding, tuple[int, int] | None]] = [
        (Finding("secret", "generated-password", *_line_col(text, start)), (start, end))
        for start, end in generated_password_spans(text)]  # they need no keyword
    if not _MAYBE_SECRET.search(text):
        return out  # no keyword, no digit, no symbol: no other pattern can fire
    if _needs_detect_secrets(text):
        out += _scan_with_detect_secrets(text)
    runnable = _extra_factors().runnable(text)
    for i, ((name, _, _), may) in enumerate(zip(EXTRA_PATTERNS, runnable)):
        if not may:
            continue  # the rule's literal is not in the text: it cannot match
        judge = VALUE_JUDGES.get(name)
        for m in _rule(i).finditer(text):
            if judge is not None and not judge(m):
                continue
            line, col = _line_col(text, m.start())
            out.append((Finding("secret", name, line, col), (m.start(), m.end())))
    for start, end in random_token_spans(text):
        out.append((Finding("secret", "random-token", *_line_col(text, start)), (start, end)))
    for start, end in table_cell_spans(text):
        out.append((Finding("secret", "credential-column", *_line_col(text, start)), (start, end)))
    for start, end in key_block_spans(text):  # the whole block is the secret
        out.append((Finding("secret", "private-key-block", *_line_col(text, start)), (start, end)))
    if not out:
        return out
    encrypted = [(m.start(), m.end(), m.group().startswith(("ENC[", "secure:")))
                 for m in _ENCRYPTED.finditer(text)]  # once per text, not per finding
    return [(f, span) for f, span in out if span is None or not _stand_in(text, span, encrypted)]


# A run of one character standing in for a value (ghp_xxxx..., T00000000, ****).
# ... and AWS's documentation marks every made-up value with EXAMPLE (AKIAI44QH8DHBEXAMPLE).
_FILLER = lazy(r"(?i:x{5,})|0{6,}|\*{4,}|•{3,}|(?<=[A-Za-z0-9])EXAMPLE|EXAMPLE(?=[A-Za-z0-9])")
# Values encrypted for a secret manager: sops and hiera-eyaml ENC[...], Pulumi's
# "secure: v1:...", a SealedSecret's encryptedData, an Ansible vault's body.
_ENCRYPTED = lazy(
    r"ENC\[[^\]]*\]?|\bsecure:\s*v1:\S+|\$ANSIBLE_VAULT;[^\n]*(?:\n[ \t]+[0-9a-f]+)*"
    r"|^([ \t]*)encryptedData:[^\n]*(?:\n\1[ \t]+[^\n]*)*", re.M)


def _stand_in(text: str, span: tuple[int, int],
              encrypted: list[tuple[int, int, bool]]) -> bool:
    """The finding at ``span`` is a placeholder or lies in an ``encrypted`` value
    ((start, end, whether a finding that only ends inside it counts)), not a secret."""
    if _FILLER.search(text, span[0], span[1]):
        return True
    return any(start <= span[0] + 1 and span[1] <= end + 1 or
               tail and start <= span[1] - 1 < end for start, end, tail in encrypted)


def _words_only(value: str) -> bool:
    """``value`` is words a person wrote ("test-key", "not-her-password", "MySecret"): no
    digit, no symbol beyond - _ . and few bits a character (gate/naturalness.py)."""
    return (not any(ch.isdigit() or not (ch.isalpha() or ch in "-_.") for ch in value)
            and naturalness.bits_per_char(value) < _NAME_BITS)


def _scan_with_detect_secrets(text: str) -> list[tuple[Finding, tuple[int, int] | None]]:
    ds = _detect_secrets()
    out: list[tuple[Finding, tuple[int, int] | None]] = []
    offset = 0
    for n, line in enumerate(text.split("\n"), start=1):
        if _needs_detect_secrets(line):
            for secret in ds["scan_line"](line):
                value = secret.secret_value or ""
                if secret.type == "Secret Keyword" and (PLACEHOLDER_VALUE.match(value)
                                                        or ENV_VAR_NAME.match(value)
                                                        or _REF_PATH.match(value)
                                                        or _words_only(value)):
                    continue
                if secret.type == "Basic Auth Credentials" and (
                        _CAPS_WORD.fullmatch(value) or f"//{value}:{value}@" in line
                        or _words_only(value)):
                    continue  # postgresql://USER:PASSWORD@HOST as documentation writes it; a
                    # password that repeats the user (postgres:postgres@) is a well-known default
                col = line.find(value) + 1 if value and value in line else 0
                span = None
                if col:
                    # Plugins with capture groups report only a prefix ("ghp"): mask the
                    # whole token the value starts, up to white space or a quote.
                    start, end = col - 1, col - 1 + len(value)
                    while end < len(line) and not line[end].isspace() and line[end] not in "\"'`":
                        end += 1
                    span = (offset + start, offset + end)
                out.append((Finding("secret", secret.type, n, col), span))
        offset += len(line) + 1
    return out



def _mask_once(text: str) -> tuple[str, int]:
    lines = text.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    spans: list[tuple[int, int]] = []
    for finding, span in scan_secrets(text):
        if span is None:
            start = starts[finding.line - 1]
            span = (start, start + len(lines[finding.line - 1]))
        spans.append(span)
    merged: list[list[int]] = []  # overlapping spans (a key block and its BEGIN line) merge
    for start, end in sorted(spans):
        if merged and start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    for start, end in reversed(merged):
        text = text[:start] + "[REDACTED]" + text[end:]
    return text, len(merged)


def redact(text: str) -> tuple[str, int]:
    """``text`` with every detected secret masked, and how many were masked.

    A private key block is masked from BEGIN to END inclusive (to the end of the text
    when its END line is missing); a secret whose exact span is unknown masks its
    whole line. Masking repeats while the scan still finds something (a mask can
    reveal a neighbour's shape); ``redaction_leftovers`` says what is left, if anything.
    """
    total = 0
    for _ in range(3):
        text, n = _mask_once(text)
        total += n
        if not n:
            break
    return text, total


def redaction_leftovers(text: str) -> list[Finding]:
    """What the secret scan still finds in a redacted text: a write must refuse if any."""
    return [f for f, _ in scan_secrets(text)]

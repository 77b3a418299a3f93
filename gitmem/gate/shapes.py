"""Secret shapes that need no keyword: key blocks, random tokens, generated passwords,
a table's credential column.

Each returns the (start, end) spans of what it finds; ``secrets`` turns them into
findings. Whether a token is machine-made is gate/naturalness.py's call. A token
that is base64 of readable text is data unless the text it decodes to holds a
secret: ``holds_secret`` (the whole secret scan, passed in by ``secrets``) says.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from . import naturalness
from .judges import _FILLER, _MADE_BY_A_MACHINE, _NAME_BITS
from .lazyre import lazy
from .secret_rules import _JOINED_PHRASE, _NOT_A_PHRASE_WORD

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



# A run of token characters long enough to be a credential.
_TOKEN_RUN = lazy(r"[A-Za-z0-9_+/=.-]{24,}")
# What such a run is when it is public: a hash or digest, a public key's body.
_PUBLIC_PREFIX = lazy(r"(?i)(?:sha\d+|h1|md5)[-:]|eyJ|AAAA[A-Za-z0-9+/]{8}|pk_(?:live|test)_|phc_"
)
# A wallet's extended public key (BIP32 xpub, ypub, zpub, tpub; its private twin is xprv,
# yprv, ...): base58, 111 characters, public by design. (Its checksum is not checked: the
# corpora's made-up xpubs fail it, and a private key's body typed behind "xpub" passes.)
_EXTENDED_PUBLIC = lazy(r"[xyztuvYZUV]pub[1-9A-HJ-NP-Za-km-z]{107}")


def _extended_public_key(token: str) -> bool:
    return bool(_EXTENDED_PUBLIC.fullmatch(token))
_PUBLIC_BEFORE = lazy(
    r"(?i)(?:ssh-(?:rsa|ed25519|dss)|ecdsa-sha2-\S+|sk-ssh-\S+|sha(?:256|384|512)[-:]|h1:|@|base64,"
    r"|(?-i:\"(?:n|e|x|y)\"\s*:\s*\")|\bkid\b[^\n]{0,30}|\b(?:state|nonce)\b[^\n]{0,30}|sitekey=[\"']?"  # public JWK members, key ids
    # what the text says the token is: public, an id, a place in a listing
    r"|(?:\b|(?<=_))(?:public|pub|publishable|site)(?:[_ .-]?key)?(?:\b|(?=_))[\w .-]{0,24}?[\"']?\s*[:=]?|(?<!secret )(?<!secret-)\b(?:ids?|cursor|etag)[\"']?\s*[:=]?"
    r"|(?<![Ss]ecret)(?<![Ss]ecret_)(?-i:(?<=[a-z])I[Dd]s?|(?<=[a-z]_)ids?)[\"']?\s*[:=]?"  # SnapshotId, upload_id
    r"|\b(?:page|pagination|next|continuation|sync)[ _-]?token[\"']?\s*[:=]?)\s*[\"'`]?$")
# A vendor's short prefix before the random part (cus_, ord_, gsk_): object ids are
# short, so what is random must be 32 characters long on its own.
_HASH_PART = lazy(r"(?:^|[-_.])[0-9a-f]{32,}(?:$|[-_.])"
                  # ... or a Twilio SID, one of its type tags glued to a 128-bit hex id (SM a
                  # message, CA a call, AC an account, ...): a name for a record, never its key
                  r"|^(?:AC|SM|MM|CA|PN|MG|RE|CF|QU|AP|FW|IS|HX|CH|IM|TR|VE)[0-9a-f]{32}$")
_ID_PREFIX = lazy(r"^[A-Za-z]{1,10}[_-]")
# One name of a dotted chain: CamelCase words, capitals, digits, joined by underscores.
_NAME_PART = lazy(r"(?:[A-Z]*[a-z]+(?:[A-Z][a-z]+)*|[A-Z]+[0-9]*|[0-9]+)(?:_(?:[A-Z]*[a-z]+(?:[A-Z][a-z]+)*|[A-Z]+[0-9]*|[0-9]+))*")
_PUBLIC_BLOCK = lazy(r"-----BEGIN (?:[A-Z0-9 ]+ )?(?:PUBLIC KEY(?: BLOCK)?|CERTIFICATE(?: REQUEST)?|SIGNATURE)-----")


def _switches(token: str) -> int:
    """How often the character class (upper, lower, digit, other) changes along ``token``."""
    def cls(ch: str) -> int:
        return 0 if ch.isupper() else 1 if ch.islower() else 2 if ch.isdigit() else 3
    classes = [cls(ch) for ch in token]
    return sum(1 for a, b in zip(classes, classes[1:]) if a != b)


def _encodes_text(token: str, holds_secret: Callable[[str], object]) -> bool:
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
    return not holds_secret(raw)  # shorter each time: the recursion ends


_NAME_PREFIX = lazy(r"[A-Za-z_][\w.-]*=")  # NAME=value: judge the value


def random_token_spans(text: str, holds_secret: Callable[[str], object]) -> list[tuple[int, int]]:
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
        if (_PUBLIC_PREFIX.match(token) and token.count(".") < 2) or _extended_public_key(token):
            continue  # sha512-..., h1:..., base64 of '{"', a public key's AAAA...
        if _HASH_PART.search(token):
            continue  # an id built on a hash (node-cache-Linux-x64-npm-<sha256>)
        if "." in token and all(_NAME_PART.fullmatch(p) for p in token.split(".")):
            continue  # a dotted chain of names (Prefs.PrefKeyEncryptionScheme.AES256_SIV)
        if token.startswith("pk.eyJ"):
            continue  # a Mapbox public token (its secret tokens start sk.)
        if _encodes_text(token, holds_secret):
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
        if _in_a_list_of_public_keys(text, start):
            continue
        spans.append((start, m.end()))
    return spans


_PUBLIC_KEYS_HEAD = lazy(r"(?i)\bpublic[ _-]?keys?\b")
# What a row may name that is not public (the head may: "private keys never leave the devices").
_PRIVATE_WORD = lazy(r"(?i)priv|secret|\bpsk\b|pre-?shared|passw|token|cookie|sig|hmac|session|cred|auth|mistake")
# A 32-byte key in base64 (WireGuard, X25519): 43 characters and one "=". Only such a row is
# excused: any other token under the head is what it is.
_KEY32 = lazy(r"[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=")


def _in_a_list_of_public_keys(text: str, start: int) -> bool:
    """The token at ``start`` is a row of a list whose first line says it lists public keys
    ("peer list for wg0 (public keys only)" over "name  <key>  10.0.0.2/32" rows), and
    neither its row nor a row above it names anything private (the head may: "private
    keys never leave the devices"). A WireGuard or age public key has a private key's
    shape: only what the list says of it tells them apart."""
    end = text.find("=", start, start + 44)
    if end != start + 43 or not _KEY32.fullmatch(text, start, end + 1):
        return False
    row_start = text.rfind("\n", 0, start) + 1
    row_end = text.find("\n", start)
    rows = 0
    at = row_start
    while at > 0 and rows < 16:
        head_start = text.rfind("\n", 0, at - 1) + 1
        head = text[head_start:at - 1]
        if not head.strip():
            return False  # a blank line ends the list before a head was found
        if _PUBLIC_KEYS_HEAD.search(head):
            return not _PRIVATE_WORD.search(text, at, row_end if row_end >= 0 else len(text))
        at, rows = head_start, rows + 1
    return False


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
_TWO_STRONG = lazy(r"[!#$%&*+=?@^~][^!#$%&*+=?@^~]*[!#$%&*+=?@^~]")
_NAME_EQUALS = lazy(r"[A-Za-z_][A-Za-z_.-]*=")  # "name=value": judge the value
_WORD_DASH = lazy(r"[a-z]{3,12}-")  # "label-value"
_QUERY = lazy(r"[A-Za-z_][\w.-]*=[^&=]*&[A-Za-z_][\w.-]*=")  # a=1&b=2, X-Amz-Algorithm=...&X-Amz-Credential=
_ESCAPE_END = lazy(r"(?:\\[rnt])+$")  # send "...\r" in an expect script
_EMAIL = lazy(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


def _symbol_rich(token: str, holds_secret: Callable[[str], object]) -> bool:
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
            and not _EMAIL.fullmatch(token) and not _encodes_text(token, holds_secret)
            and not _SYNTAX.search(body)
            and ("*" not in token or not symbols & _STRONG_SYMBOLS <= _ARITHMETIC
                 or len(set(_ODD_SEGMENT.findall(token))) >= 2))


def generated_password_spans(text: str, holds_secret: Callable[[str], object]) -> list[tuple[int, int]]:
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
        if not _TWO_STRONG.search(m.group()):
            continue  # _symbol_rich needs two strong symbols, and stripping adds none
        start, token = m.start(), _ESCAPE_END.sub("", m.group())
        name = _NAME_EQUALS.match(token)
        if name:
            start, token = start + name.end(), token[name.end():]
        word = _WORD_DASH.match(token)
        if word and naturalness.bits_per_char(word.group()) < _NAME_BITS:
            start, token = start + word.end(), token[word.end():]  # nonce-..., sha256-...: a label
        if _symbol_rich(token, holds_secret) and not _SRI.fullmatch(token):
            spans.append((start, start + len(token)))
    return spans


# A digest as Subresource Integrity and Nix write it (sha256-<base64>): in lockfiles.
_SRI = lazy(r"(?:sha(?:1|256|384|512)|md5)-[A-Za-z0-9+/]{20,}={0,2}")


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
        copy = _COPY_HEADER.match(line) if line.startswith("COPY") else None
        if copy:  # a PostgreSQL dump: its columns named here, rows tab-separated below
            sep = "\t"
            names = [(0, name) for name in copy.group(1).split(",")]
            found = [(i, bool(m.group("key"))) for i, (_, name) in enumerate(names)
                     if (m := _CREDENTIAL_HEADER.match(name.strip().strip('"')))]
            columns = found or None
        elif sep == "\t" and columns is not None and line != "\\.":
            _judge_cells(line, sep, columns, offset, spans)
        elif not _TABLE_LINE.match(line):
            columns = None
        elif columns is None:
            sep = "|" if line.strip().startswith("|") else ","
            cells = _cells(line, sep)
            found = [(i, bool(m.group("key"))) for i, (_, cell) in enumerate(cells)
                     if (m := _CREDENTIAL_HEADER.match(cell.strip()))]
            columns = found or None
        elif sep not in line:
            columns = None  # a line of another shape ("a, b" under a "| ... |" header) ends it
        else:
            _judge_cells(line, sep, columns, offset, spans)
        offset += len(line) + 1
    return spans


# A PostgreSQL dump's COPY line, which names the columns of the rows that follow.
_COPY_HEADER = lazy(r'COPY\s+[\w."]+\s*\(([^)\n]{1,2000})\)\s+FROM\s+stdin;?\s*$')


def _judge_cells(line: str, sep: str, columns: list[tuple[int, bool]], offset: int,
                 spans: list[tuple[int, int]]) -> None:
    """Add to ``spans`` the credentials in ``columns`` (index, whether the header only
    says "key") of one table line at ``offset`` of the text."""
    cells = _cells(line, sep)
    for i, just_key in columns:
        if i < len(cells):
            start, cell = cells[i]
            value = cell.strip().strip("`'\"")
            if value and _a_credential(value, machine_made=just_key):
                at = offset + start + cell.index(value)
                spans.append((at, at + len(value)))


def _cells(line: str, sep: str) -> list[tuple[int, str]]:
    """(start, text) of each cell of a table line."""
    out, start = [], 0
    if sep == "|":
        first = line.find("|")
        if first < 0:
            return []  # (no cell: not a line of this table)
        parts = line[first + 1:].split("|")[:-1]
        start = first + 1
    else:
        parts = line.split(sep)
    for part in parts:
        out.append((start, part))
        start += len(part) + 1
    return out


_PASSPHRASE_CELL = lazy(rf"{_JOINED_PHRASE}|(?!(?:[a-z]{{3,10}}-){{0,6}}{_NOT_A_PHRASE_WORD}(?![a-z]))"
                        r"[a-z]{3,10}(?:-[a-z]{3,10}){2,6}\d{1,4}")  # (walnut-lotus-canvas33, not see-the-vault2)


def _a_credential(value: str, machine_made: bool = False) -> bool:
    """A cell's value is a credential: one token, not a placeholder or a reference, a
    letter and a digit, and chosen (a symbol beyond - _ . or mixed case) or machine-made
    (only machine-made under a header that just says "key": its cells may be names);
    or, under a password header, a passphrase of three or more words (ember-lynx-mango)."""
    if not machine_made and _PASSPHRASE_CELL.fullmatch(value):
        return True
    if (not 6 <= len(value) <= 200 or any(ch.isspace() for ch in value) or set(value) <= set("-:| ")
            or _FILLER.search(value) or not any(ch.isdigit() for ch in value)
            or not any(ch.isalpha() for ch in value) or value[0] in "$<{%[(/~"
            or "://" in value or "..." in value or value.startswith(("env:", "vault:", "op:", "arn:"))):
        return False
    chosen = not machine_made and (any(not ch.isalnum() and ch not in "-_." for ch in value)
                                   or (value.lower() != value and value.upper() != value))
    return chosen or naturalness.bits_per_char(value) >= _MADE_BY_A_MACHINE



# A secret handed over in pieces: a line that names a credential and says it comes in
# parts ("too long for the chat box, so here it is in two parts, just concatenate them:"),
# then one token a line. Joined, the pieces are one value: a secret if a machine made it
# or the scan refuses it after the line's words ("Stripe signing key: whsec_...").
# (Two lookaheads from the line's start, each one pass over it: "a key word, then the
# phrase" as one pattern retried the phrase after every key word, quadratic on a long
# line: "key " * 4000 took 0.9 s, 64 KB 14 s.)
_IN_PARTS = lazy(
    r"(?im)^(?=[^\n]*?\b(?:key|token|secret|password|passphrase|pat|credentials?)\b)"
    r"(?=[^\n]*?(?:\bin\s+(?:two|three|four|2|3|4)\s+(?:parts|pieces|halves|chunks|lines)|\bsplit\b"
    r"|\bconcatenat\w*|\bjoin\s+them))([^\n]*)\n")
_NOT_SECRET_PARTS = lazy(r"(?i)\b(?:fingerprint|hash|checksum|digest|commit|public|sha\d*)\b")
_PART_LINE = lazy(r"[ \t]*([A-Za-z0-9_/+=:.-]{6,200})[ \t]*(?:\n|$)")


def split_secret_spans(text: str, holds_secret: Callable[[str], object]) -> list[tuple[int, int]]:
    """Spans of a secret given in two or more pieces, one a line, after a line that says so."""
    if "\n" not in text:
        return []
    spans = []
    for m in _IN_PARTS.finditer(text):
        if _NOT_SECRET_PARTS.search(m.group(1)):
            continue
        pos, parts = m.end(), list[str]()
        while len(parts) < 6 and (part := _PART_LINE.match(text, pos)):
            parts.append(part.group(1))
            pos = part.end()
        joined = "".join(parts)
        if len(parts) < 2 or len(joined) < 20:
            continue
        if (naturalness.bits_per_char(joined) >= _MADE_BY_A_MACHINE
                or holds_secret(m.group(1) + "\n" + joined)):
            spans.append((m.end(), pos))
    return spans


# A token split into string literals that the language joins: Python's and C's adjacent
# literals one a line ("ghp_x3Uc"\n"bHhDJv" ...), or literals joined by + or .. (JavaScript,
# Lua). (Bounded pieces and runs: a long line of literals is linear.)
# Joined by an operator, or by a line break (adjacent on one line is CSP and shell words:
# script-src 'self' 'sha256-...').
_LITERAL_RUN = lazy(r"(?:[\"'][A-Za-z0-9_+/=.-]{4,200}[\"'][ \t]*(?:(?:\+|\.\.)[ \t]*\n?|\n)[ \t]*){1,7}"
                    r"[\"'][A-Za-z0-9_+/=.-]{4,200}[\"']")
_LITERAL = lazy(r"([\"'])([A-Za-z0-9_+/=.-]{4,200})\1")


def joined_literal_spans(text: str, holds_secret: Callable[[str], object]) -> list[tuple[int, int]]:
    """Spans of string literals that, joined, are a secret the scan knows on its own
    (a vendor token, a key): splitting a token across literals hides it from a scanner,
    not from whoever runs the code. Joined literals are judged by the secret rules only,
    never by how random they look (base64 of an image is split the same way)."""
    if text.count('"') + text.count("'") < 4:
        return []
    spans = []
    for m in _LITERAL_RUN.finditer(text):
        pieces = [p.group(2) for p in _LITERAL.finditer(m.group())]
        joined = "".join(pieces)
        if len(pieces) >= 2 and len(joined) >= 20 and holds_secret(joined):
            spans.append((m.start(), m.end()))
    return spans

"""Value judges: whether the value a secret rule matched is a credential.

A rule of ``secret_rules`` that holds a ``(?P<value>...)`` group states where a
credential goes; the judge named for it in ``VALUE_JUDGES`` says whether what
stands there is one (machine-made, chosen with a digit or a symbol, not a name
of words, not a page or request token). ``secrets`` runs the rules and asks
these; ``shapes`` and ``plugins`` share the word and filler tests.
"""

from __future__ import annotations

import re

from . import naturalness
from .lazyre import lazy
from .secret_rules import KEY_WORD_BEFORE_VALUE

# Bits per character (gate/naturalness.py) above which a token looks machine-made: words
# and names cost 2-4.5, keys and hashes 5.5-8.
_MADE_BY_A_MACHINE = 5.0


def _machine_or_chosen(m: re.Match[str]) -> bool:
    """A value after a keyword is a secret if a machine made it (4.5+ bits a character,
    gate/naturalness.py) or a person chose it with a digit in it; a name made of
    words (nextPageToken, Token.Name.Builtin, ConfirmLoginContinue) is neither. And
    a token that only marks a place or a request (a page token, an idempotency
    token) is not a credential."""
    value = m.group("value")
    if _NOT_A_CREDENTIAL.search(m.string, max(0, m.start() - 20), m.start("value")):
        return False
    if ((NAMES_A_DIGEST.search(m.string, m.start(), m.start("value")) and looks_like_a_digest(value))
            or _DIGEST_VALUE.fullmatch(value.strip("\"'`,;"))):
        return False  # "hashed_secret": <sha1>, "client_token": "hmac-sha256:...": what was kept of it
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


# A setting named for what was kept of a secret, not the secret: its hash, or the command
# or file that gives it (hashed_secret, password_sha256, password_command, token_file).
NAMES_A_DIGEST = lazy(
    r"(?i)(?:hash(?:ed)?|digest|checksum|fingerprint)[_ -]?(?:secret|password|passwd|pass|pwd|token|key)"
    r"|(?:secret|password|passwd|pass|pwd|token|key)[_ -]?(?:command|cmd|eval|hash(?:ed)?|digest|checksum|sha\d*|md5|fingerprint)\b")
# A value that names the digest it is (Vault's audit log writes "hmac-sha256:<hex>").
_DIGEST_VALUE = lazy(r"(?i)(?:hmac-)?(?:sha\d*|md5|blake2\w*|sha3-\d+)[:-](?:[0-9a-f]{32}|[0-9a-f]{40}|[0-9a-f]{64}|[0-9a-f]{128})")
# What a digest looks like: hex of a hash's length, its base64, or a password hash's format.
_DIGEST_SHAPE = lazy(r"[\"'`]?(?:[0-9a-fA-F]{32}|[0-9a-fA-F]{40}|[0-9a-fA-F]{64}|[0-9a-fA-F]{128}"
                     r"|[A-Za-z0-9+/]{27}=|[A-Za-z0-9+/]{43}=|[A-Za-z0-9+/]{86}=="
                     r"|\$(?:2[aby]?|argon2\w*|pbkdf2[\w-]*|scrypt|[156])\$\S+|(?:sha\d+|md5):\S+)[\"'`,;]?")


def looks_like_a_digest(value: str) -> bool:
    """``value`` has a digest's shape (a name that says "hash" excuses nothing else:
    db_password_sha256: Xk9mQ2vL7pR4 is a password)."""
    return bool(_DIGEST_SHAPE.fullmatch(value))


_KEY_WORD_BEFORE = lazy(KEY_WORD_BEFORE_VALUE)


def _after_a_key_word(m: re.Match[str]) -> bool:
    """The words before the value, on its line, end in a key word (key, token, secret, klucz,
    キー, ...) and none of them says the key is an id, a hash or a place in a listing."""
    line_start = m.string.rfind("\n", 0, m.start()) + 1
    start = max(line_start, m.start() - 80)
    return (bool(_KEY_WORD_BEFORE.search(m.string, start, m.start()))
            and not _A_DIGEST.search(m.string, start, m.start()))


# Words that say a hex value is a digest of something ("sha256 of the key file: <hex>").
_A_DIGEST = lazy(r"(?i)(?<![a-z])(?:sha-?\d*|md5|checksum|digest|hash(?:ed|es)?|fingerprint|integrity)(?![a-z])")


_ONES_OWN = lazy(r"(?i)\b(?:my|personal|own|temporary|temp|private)\s+(?:api\s+|access\s+)?$")


def _called_ones_own(m: re.Match[str]) -> bool:
    """The key or token before the value is called someone's own: "my personal key <uuid>"."""
    return bool(_ONES_OWN.search(m.string, max(0, m.start() - 40), m.start()))


def _pasted_token(m: re.Match[str]) -> bool:
    """A chat's pasted answer: a lone token counts when a machine made it (a branch name or
    a file name is words); codes, mnemonics and chosen passwords have their shape already."""
    return m.group("value") is None or _made_by_a_machine(m)


_CAPITAL_NAMED = lazy(r"(?i)\b(?:capital|small|big|upper(?:case)?|lower(?:case)?)\s")
_NOT_SAID = lazy(r"(?i)\b(?:not|never|isn't|wasn't)\b|n't\b")


def _said_to_be_a_password(m: re.Match[str]) -> bool:
    """The spelled-out value names which letters are capitals, and nothing from its line's
    start to it says it is not the password ("the plate, not a password: capital kilo, ...")."""
    line_start = m.string.rfind("\n", 0, m.start()) + 1
    return (bool(_CAPITAL_NAMED.search(m.group("value")))
            and not _NOT_SAID.search(m.string, line_start, m.start("value")))


# What a setting's value is when it is public: a public key's body (AAAA...), base64 of JSON (eyJ).
_PUBLIC_BODY = lazy(r"AAAA[A-Za-z0-9+/]{8}|eyJ")


def _named_and_made(m: re.Match[str]) -> bool:
    """credential-name-value: a machine-made value that is not a public key's body or JSON."""
    return not _PUBLIC_BODY.match(m.group("value")) and _made_by_a_machine(m)


def _random_bytes(m: re.Match[str]) -> bool:
    """A list of bytes is a key when its bytes look drawn at random: ten or more distinct
    values (not 0, 1, 2, ... or a repeated filler)."""
    values = [v.strip().lower() for v in m.group("value").split(",")]
    numbers = [int(v, 16) if v.startswith("0x") else int(v) for v in values]
    return len(set(numbers)) >= 10 and numbers != sorted(numbers)


# Names cost 2-4.5 bits a character (identifiers of several words, about 3-4).
_NAME_BITS = 4.5
# Rules whose match holds a (?P<value>...) group, and what that value must be.
VALUE_JUDGES = {"keyword-assignment": _machine_or_chosen, "credential-call": _made_by_a_machine,
                "webhook-url": _made_by_a_machine, "credential-literal-in-call": _strong,
                "url-userinfo-password": _not_words_only, "secret-store-command": _machine_or_chosen,
                "app-password-groups": _machine_or_chosen, "host-user-password-call": _strong,
                "stand-in-credential": _made_by_a_machine, "key-argument": _made_by_a_machine,
                "set-token-command": _made_by_a_machine, "credential-word-hex": _after_a_key_word,
                "grouped-key-after-key": _after_a_key_word, "personal-key-hex": _called_ones_own,
                "plist-credential": _machine_or_chosen, "android-meta-credential": _machine_or_chosen,
                "typed-assignment": _machine_or_chosen, "name-value-record": _machine_or_chosen,
                "name-value-entry": _machine_or_chosen, "pasted-answer": _pasted_token,
                "credential-name-value": _named_and_made, "byte-list-key": _random_bytes,
                "spoken-password": _said_to_be_a_password}



# A run of one character standing in for a value (ghp_xxxx..., T00000000, ****).
# ... and AWS's documentation marks every made-up value with EXAMPLE (AKIAI44QH8DHBEXAMPLE).
_FILLER = lazy(r"(?i:x{5,})|0{6,}|\*{4,}|•{3,}|(?<=[A-Za-z0-9])EXAMPLE|EXAMPLE(?=[A-Za-z0-9])")


def _words_only(value: str) -> bool:
    """``value`` is words a person wrote ("test-key", "not-her-password", "MySecret"): no
    digit, no symbol beyond - _ . and few bits a character (gate/naturalness.py)."""
    return (not any(ch.isdigit() or not (ch.isalpha() or ch in "-_.") for ch in value)
            and naturalness.bits_per_char(value) < _NAME_BITS)


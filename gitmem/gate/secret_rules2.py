"""The secret rules, continued: families found after ``secret_rules`` passed 500 lines.

Round 9 (fixtures/gate/figures, "round": 9): credentials in typed declarations, in
records that hold a name and its value, and what a password manager printed.
Round 10 (fixtures/gate/figures, "round": 10) leaned on how people hand a secret to
each other: pasted into a chat as the answer to a question, read out letter by
letter on a call, kept in a setting named for a key whose value is base64, written
as a list of bytes. Each rule is said generally, from the family; ``secret_rules``
appends them to EXTRA_PATTERNS, ``judges`` has the last word on a ``value`` group.
"""

from __future__ import annotations

# --- round 9 (fixtures/gate/figures, "round": 9): dev misses, each family said generally ---
# A name's parts after its key word that say it is not the credential (AUTH0_CLIENT_ID,
# SIGNING_KEY_ID, LoginItem, passwordFieldId).
_NOT_IT = r"(?!(?i:id|ids|name|item|field|ttl|url|uri|path|file|type|length|expiry|expires|hint|policy)(?![a-z]))"


def round9(_KW: str, _PRE: str, _POST: str, _VALUE: str, _HUMAN_CHOSEN: str) -> list[tuple[str, str, str]]:
    """Round 9's rules, in secret_rules' words: its key words, the parts of a name before and after
    them, a value, a password a person chose."""
    _NAMED = rf"(?:[^\"<\n]{{0,80}}[/_. -])?{_KW}(?:[_. -]?{_NOT_IT}[A-Za-z0-9]{{1,20}}){{0,3}}"  # PLAID_SECRET, /prod/db/password
    return [
        # A declaration with a type between the name and its value (Scala, Kotlin, Swift, TypeScript):
        # val secretKeyBase: String = "...", var token: String? = "..."
        ("typed-assignment",
         rf"(?i){_PRE}{_KW}(?-i:(?:{_NOT_IT}[A-Z][a-z0-9]{{1,20}}){{0,2}}){_POST}\s*:\s*[A-Za-z][\w.]{{0,30}}[?!]?\s*=\s*"
         rf"(?-i:{_VALUE})",
         "name: Type = value, the type between a credential's name and its value"),
        # A name and its value as two fields of one record: the GitLab variables API and AWS SSM
        # print {"key"/"Name": "PLAID_SECRET", "value"/"Value": "..."}, KeePass XML has
        # <Key>Password</Key><Value>...</Value>.
        ("name-value-record",
         rf"(?i)\"(?:key|name|variable|parameter_?key|parameter_?name|env_?var)\"\s*:\s*\"{_NAMED}\""
         rf"[^{{}}\[\]]{{0,300}}?\"(?:value|parameter_?value|secret_?value)\"\s*:\s*(?-i:{_VALUE})",
         "a credential's name and its value as fields of one JSON record"),
        ("name-value-entry", rf"(?i)<(?:key|name)>{_NAMED}</(?:key|name)>\s*<value\b[^>]*>(?-i:{_VALUE})",
         "a credential's name and its value as an XML entry's two elements (KeePass)"),
        # What a password manager's command prints on the line after it: op item get ...
        # --reveal, bw get password, lpass show --password, security find-generic-password -w,
        # vault kv get -field=password, gopass show.
        ("password-manager-output",
         # (what the command line must hold is looked ahead for once, from the line's start:
         # scanning back for it from each of its words was quadratic on one long line)
         r"(?im)^[ \t]*(?:[$#>❯%][ \t]*)?(?:op\s+(?:item\s+get|read)\b(?=[^\n]*(?:--reveal|password|secret|token|op://))"
         r"|bw\s+get\s+(?:password|item)\b|lpass\s+show\b(?=[^\n]*--password)"
         r"|security\s+find-(?:generic|internet)-password\b(?=[^\n]*\s-w\b)"
         r"|vault\s+(?:kv\s+get|read)\b(?=[^\n]*-field[= ]\w*(?:pass|secret|token|key))|gopass\s+(?:show\s+)?-o\b)[^\n]*+\n"
         rf"[ \t]*(?:[^\s,]{{1,64}},)?{_HUMAN_CHOSEN}[ \t]*$",
         "a password manager's command and the password it printed on the next line"),
    ]


# The words of a chat question that asks for a credential ("where's the W&B API key for
# reports?", "what's the RADIUS shared secret?"): the thing asked for, not the verb.
# (One vocabulary for the words a chat or a call names a credential by: the question's and the
# word before a spelled-out password, below.)
_CREDENTIAL_WORD = r"(?:pass(?:word|phrase|code)?|pw|psk|pin|key|token|secret|creds?|credentials?)"
_ASKED_FOR = (rf"(?:(?:api|access|secret|auth|license|app)[ _-]?(?:key|token)|seed(?:\s+phrase)?|mnemonic"
              rf"|(?:recovery|backup)\s+codes?|{_CREDENTIAL_WORD})")
# ... and not when the question is about something else of it: its commit, hash, id, expiry.
# when it changed, a number, a model, an item, an image or tag, an example; a key that opens a door
# or a security key that ships.
_NOT_THE_VALUE = (r"\b(?:commit|sha\d*|hash(?:es)?|checksum|digest|fingerprint|ids?|build|version|rotat\w*|expir\w*"
                  r"|polic\w*|length|format|rules?|when|changed|number|model|item|image|tag|example|spec|sample|test"
                  r"|vendor|shipment|tracking|serial|fob|security key|yubikey)\b")
# A chat line: an optional [time] or time, a speaker's name and a colon ("Aiko: ...", "[03:48] Farid: ...").
_SPEAKER = r"[ \t]*(?:\[[^\]\n]{1,12}\][ \t]*)?(?-i:[A-Z][\w.-]{0,30})[ \t]*:[ \t]+"
# What a line holds when it is nothing but the answer: a machine-made token, groups of
# digits or of letters and digits (recovery codes), 12 to 24 lower-case words (a wallet's
# mnemonic), or a chosen password (its shape from secret_rules, passed in).
_PASTED = (r"(?-i:(?P<value>(?=[A-Za-z0-9+/=_.-]{0,200}\d)[A-Za-z0-9+/=_.-]{16,200})"
           r"|\d{4,8}(?:[ -]\d{4,8}){1,15}"
           r"|(?=[a-z0-9-]{0,40}\d)(?=[a-z0-9-]{0,40}[a-z])[a-z0-9]{4,6}(?:-[a-z0-9]{4,6}){1,4}"
           r"|(?:[a-z]{3,8} ){11,23}[a-z]{3,8})")

# A password read out on a call, as a transcript writes it: NATO letters, "capital"/"small"
# before a letter, digits and symbols as words, one item after another, eight or more.
_CASE_WORD = r"(?:capital|small|big|upper(?:case)?|lower(?:case)?)"
_SPOKEN_ITEM = (rf"(?:(?:{_CASE_WORD}\s+)?(?:alpha|alfa|bravo|charlie|delta|echo|foxtrot|golf|hotel|india|juliett?"
                r"|kilo|lima|mike|november|oscar|papa|quebec|romeo|sierra|tango|uniform|victor|whiske?y|x-?ray"
                r"|yankee|zulu)|zero|one|two|three|four|five|six|seven|eight|nine|niner|dot|dash|hyphen"
                r"|underscore|hash|at|ampersand|exclamation(?:\s+mark)?|bang|star|asterisk|dollar|percent|plus"
                rf"|equals|slash|caret|tilde|question\s+mark|{_CASE_WORD}\s+[a-z])(?![\w-])")


def round10(human_chosen: str) -> list[tuple[str, str, str]]:
    """Round 10's rules; ``human_chosen`` is secret_rules' pattern for a password a person chose."""
    return [
        ("pasted-answer",
         # (the question is looked for from a line's start, bounded: a long line of "key key
         # key ..." cannot make it try each word against the rest of the line)
         rf"(?im)^(?=[^\n]{{0,300}}\?[ \t]*\n)(?![^\n]{{0,300}}?{_NOT_THE_VALUE})[^\n]{{0,300}}?\b{_ASKED_FOR}\b[^\n?]{{0,200}}\?[ \t]*\n"
         rf"(?:[^\n]{{0,300}}\n){{0,2}}?{_SPEAKER}(?:{_PASTED}|{human_chosen})[ \t]*$",
         "a chat's answer to a question asking for a credential: a line that is nothing but the value"),
        ("spoken-password",
         # (looked for from the word for it, then the list within the line or the next; judges.py
         # asks for a capital named in it and no "not" before it)
         rf"(?i)(?<![\w-])(?<!public )(?<!host ){_CREDENTIAL_WORD}(?![\w-])"
         r"(?![^\n]{0,60}?\b(?:fingerprint|ids?|serial|plate|checksum|ticket)\b)"
         rf"[^\n]{{0,60}}?(?:\n[^\n]{{0,60}}?)?(?<![\w-])(?P<value>{_SPOKEN_ITEM}(?:,\s*{_SPOKEN_ITEM}){{7,}})",
         "a password read out letter by letter (capital quebec, uniform, small t, seven, ...), as a call's"
         " transcript writes it, after the word for it"),
        ("credential-name-value",
         r"\b(?![A-Z0-9_]*?(?:PUBLIC|PUB|PUBLISHABLE|SITE|ANON|HOST|GPG|PGP|CACHE|HASH|CHECKSUM|SHA|COMMIT|IDEMPOTENCY"
         r"|REQUEST|TRACE|SORT|PARTITION|PAGE|PAGINATION|CONTINUATION|CURSOR|NEXT|SYNC|MESSAGE|LOCK|DEDUP|SHARD)_)"
         r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*_(?:KEY|TOKEN|SECRET|KEYTAB|PSK|CREDENTIALS?)(?:_(?:B64|BASE64|DATA|VALUE))?"
         r"[\"']?\s*[:=]\s*[\"']?(?P<value>[A-Za-z0-9+/_.=-]{24,})",
         "AZURE_STORAGE_KEY=<base64>, KRB5_KEYTAB_B64=...: a setting named for a key, holding a machine-made value"
         " (KeywordDetector wants quotes, credential-name-hex wants hex)"),
        ("byte-list-key",
         # (key as a word of the name: network_key, aesKey, KEY_BYTES; not monkey, keymap, a
         # test vector, an example, an S-box or a colour table)
         r"(?i)(?<![\w-])(?![\w-]{0,40}?(?:pub|test|vector|example|sample|fips|rfc|nist|s_?box|schedule|colou?r|map"
         r"|hot_?key|lookup|table))(?:[\w-]{0,40}?[_-]|(?-i:[\w-]{0,40}?[a-z](?=K)))?key(?-i:(?![a-z]))[\w-]{0,40}[\"']?\s*[:=]\s*\[\s*"
         r"(?P<value>(?:(?:0x)?[0-9a-f]{1,3}\s*,\s*){15}(?:0x)?[0-9a-f]{1,3}(?:\s*,\s*(?:0x)?[0-9a-f]{1,3}){0,16})\s*\]",
         "network_key: [9, 124, 75, ...]: a 16- or 32-byte key written as a list of bytes (Zigbee, a cipher's key)"),
    ]

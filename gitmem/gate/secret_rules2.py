"""The secret rules, continued: families found after ``secret_rules`` passed 500 lines.

Round 10 (fixtures/gate/figures, "round": 10) leaned on how people hand a secret to
each other: pasted into a chat as the answer to a question, read out letter by
letter on a call, kept in a setting named for a key whose value is base64, written
as a list of bytes. Each rule is said generally, from the family; ``secret_rules``
appends them to EXTRA_PATTERNS, ``judges`` has the last word on a ``value`` group.
"""

from __future__ import annotations

# The words of a chat question that asks for a credential ("where's the W&B API key for
# reports?", "what's the RADIUS shared secret?"): the thing asked for, not the verb.
_ASKED_FOR = (r"(?:pass(?:word|phrase|code)|pw|pin|(?:api|access|secret|auth|license|app)[ _-]?(?:key|token)"
              r"|key|token|secret|seed(?:\s+phrase)?|mnemonic|(?:recovery|backup)\s+codes?|creds?|credentials?)")
# ... and not when the question is about something else of it: its commit, hash, id, expiry.
_NOT_THE_VALUE = (r"\b(?:commit|sha\d*|hash(?:es)?|checksum|digest|fingerprint|ids?|build|version|rotat\w*|expir\w*"
                  r"|polic\w*|length|format|rules?)\b")
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
         # (found from the list back: judges.py asks for the word for a password before it)
         rf"(?i)(?<![\w-])(?=(?:{_SPOKEN_ITEM},\s*){{0,40}}{_CASE_WORD}\s)"  # (it says which letters are capitals)
         rf"(?P<value>{_SPOKEN_ITEM}(?:,\s*{_SPOKEN_ITEM}){{7,}})",
         "a password read out letter by letter (capital quebec, uniform, small t, seven, ...), as a call's"
         " transcript writes it, after the word for it"),
        ("credential-name-value",
         r"\b(?![A-Z0-9_]*?(?:PUBLIC|PUB|HOST|GPG|PGP|CACHE|HASH|CHECKSUM|SHA|COMMIT|IDEMPOTENCY|REQUEST|TRACE"
         r"|SORT|PARTITION|PAGE|CURSOR|NEXT|SYNC|MESSAGE|LOCK|DEDUP|SHARD)_)"
         r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*_(?:KEY|TOKEN|SECRET|KEYTAB|PSK|CREDENTIALS?)(?:_(?:B64|BASE64|DATA|VALUE))?"
         r"[\"']?\s*[:=]\s*[\"']?(?P<value>[A-Za-z0-9+/_.=-]{24,})",
         "AZURE_STORAGE_KEY=<base64>, KRB5_KEYTAB_B64=...: a setting named for a key, holding a machine-made value"
         " (KeywordDetector wants quotes, credential-name-hex wants hex)"),
        ("byte-list-key",
         r"(?i)(?<![\w-])(?![\w-]{0,40}?pub)[\w-]{0,40}?key[\w-]{0,40}[\"']?\s*[:=]\s*\[\s*"
         r"(?P<value>(?:(?:0x)?[0-9a-f]{1,3}\s*,\s*){15}(?:0x)?[0-9a-f]{1,3}(?:\s*,\s*(?:0x)?[0-9a-f]{1,3}){0,16})\s*\]",
         "network_key: [9, 124, 75, ...]: a 16- or 32-byte key written as a list of bytes (Zigbee, a cipher's key)"),
    ]

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
"""

from __future__ import annotations

import base64
import binascii
import functools
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

# -- what a reader sees: NFKC, invisible characters dropped, look-alikes folded ------------
#
# Two folded forms. ``plain``: NFKC, default-ignorables dropped, Latin/Greek/Cyrillic accents
# stripped (rules in other languages are written without accents). ``skeleton``: plain, then
# Cyrillic, Greek, Armenian and Cherokee letters that look Latin, and every dash, angle
# bracket and slash look-alike, folded to ASCII (what the English rules and the fence see).

DEFAULT_IGNORABLE = (  # Unicode 15.1 DerivedCoreProperties.txt, Default_Ignorable_Code_Point
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e0fff")
_IGNORABLE = re.compile(f"[{DEFAULT_IGNORABLE}]")
_ACCENTS = re.compile("[\u0300-\u036f]")  # combining diacritics (not the kana voicing marks)
_LOOKALIKES = (
    "АВСЕНІЈКМОРЅТХУҮԀԌԚԜӀаесһіјорѕхуүԁԛԝӏкѵ"  # Cyrillic
    "ΑΒΕΖΗΙΚΜΝΟΡΤΥΧϹͿοιναρκυϲϳε"                # Greek
    "ՕՍօսցհոզ" "ᎪᏴᏟᎬᎻᏦᎷᏢᎢᏔᏚᏃ" "ıȷɑɡɩ"          # Armenian, Cherokee, Latin variants
    "‐‑‒–—―−⁃﹘˗֊־⸺⸻➖ー" "‹›〈〉⟨⟩❬❭❮❯❰❱˂˃ᐸᐳ⧼⧽" "∕⁄⧸╱⟋ノ丿᜵")
_LATIN = (
    "ABCEHIJKMOPSTXYYDGQWIaechijopsxyydqwlkv"
    "ABEZHIKMNOPTYXCJoivapkucje"
    "OUoughnq" "ABCEHKMPTWSZ" "ijagi"
    "----------------" "<><><><><><><><><>" "////////")
_FOLD = str.maketrans(_LOOKALIKES, _LATIN)


@functools.lru_cache(maxsize=512)
def plain(text: str) -> str:
    """NFKC, default-ignorable code points dropped, accents stripped."""
    if text.isascii():
        return text
    text = unicodedata.normalize("NFKC", _IGNORABLE.sub("", text))
    return unicodedata.normalize("NFC", _ACCENTS.sub("", unicodedata.normalize("NFD", text)))


def skeleton(text: str) -> str:
    """``plain`` with look-alike letters and punctuation folded to ASCII."""
    return text if text.isascii() else plain(text).translate(_FOLD)


# -- secrets: formats and shapes detect-secrets misses --------------------------------------

_END = r"(?![A-Za-z0-9_-])"  # \b does not work after a token that may end in '-'
EXTRA_PATTERNS: list[tuple[str, str, str]] = [
    # (name, regex, one-line reason)
    ("aws-secret-access-key-unquoted",
     r"(?i)aws.{0,20}?(?:secret|key).{0,20}?[=:]\s*[\"']?[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])",
     "AWSKeyDetector's secret-key regex requires quotes (~/.aws/credentials has none)"),
    ("github-fine-grained-pat", r"\bgithub_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}" + _END,
     "GitHubTokenDetector only knows ghp_/gho_/ghu_/ghs_/ghr_"),
    ("slack-app-token", r"\bxapp-\d-[A-Z0-9]{8,}-\d{8,}-[a-f0-9]{32,}\b",
     "SlackDetector only knows xox?- tokens and webhooks"),
    ("stripe-test-or-webhook-secret", r"\b(?:[rs]k_test_[A-Za-z0-9]{24,}|whsec_[A-Za-z0-9+/]{32,})",
     "StripeDetector only knows *_live_ keys"),
    ("mailgun-api-key", r"\bkey-[0-9a-f]{32}\b", "no Mailgun plugin"),
    ("npm-token", r"\bnpm_[A-Za-z0-9]{36}\b", "NpmDetector needs the .npmrc '//host/:_authToken=' form"),
    ("artifactory-reference-token", r"\bcmVmdGtu[A-Za-z0-9]{50,}",
     "ArtifactoryDetector only knows AKC/AP keys; reference tokens are base64('reftkn...')"),
    ("dockerhub-pat", r"\bdckr_pat_[A-Za-z0-9_-]{27,}", "no Docker Hub plugin"),
    ("openai-new-style-key", r"\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{40,}",
     "OpenAIDetector needs 20 alphanumerics right before T3BlbkFJ; new keys also use - and _"),
    ("anthropic-api-key", r"\bsk-ant-(?:api|admin|oat|ort)\d{2}-[A-Za-z0-9_-]{80,}", "no Anthropic plugin"),
    ("huggingface-token", r"\bhf_[A-Za-z0-9]{34,}\b", "no Hugging Face plugin"),
    ("google-api-key", r"\bAIza[0-9A-Za-z_-]{35}" + _END, "no Google API key plugin"),
    ("google-oauth-client-secret", r"\bGOCSPX-[A-Za-z0-9_-]{28}" + _END, "no Google OAuth plugin"),
    ("firebase-fcm-server-key", r"\bAAAA[A-Za-z0-9_-]{7}:APA91b[A-Za-z0-9_-]{100,}", "no FCM plugin"),
    ("azure-sas-signature", r"[?&]sig=[A-Za-z0-9%+/=]{20,}",
     "AzureStorageKeyDetector only knows AccountKey=; SAS URLs carry sig="),
    ("azure-ad-client-secret",
     r"(?<![A-Za-z0-9_~.-])[A-Za-z0-9_~.-]{3}\dQ~[A-Za-z0-9_~.-]{31,34}(?![A-Za-z0-9_~.-])",
     "no Entra ID (Azure AD) client secret plugin"),
    ("heroku-api-key", r"\bHRKU-[A-Za-z0-9_-]{58,}", "no Heroku plugin"),
    ("digitalocean-token", r"\bdo[opr]_v1_[a-f0-9]{64}\b", "no DigitalOcean plugin"),
    ("vault-token", r"\bhv[sbr]\.[A-Za-z0-9_-]{24,}", "no HashiCorp Vault plugin"),
    ("terraform-cloud-token", r"\b[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=-]{60,}", "no Terraform Cloud plugin"),
    ("doppler-token", r"\bdp\.(?:st|ct|pt|sa|scim|audit)\.(?:[a-z0-9_-]{2,35}\.)?[A-Za-z0-9]{40,44}\b",
     "no Doppler plugin"),
    ("alibaba-access-key-id", r"\bLTAI[A-Za-z0-9]{12,20}\b", "no Alibaba Cloud plugin"),
    ("databricks-token", r"\bdapi[a-f0-9]{32}(?:-\d)?\b", "no Databricks plugin"),
    ("discord-webhook-url",
     r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{60,}",
     "DiscordBotTokenDetector only knows bot tokens"),
    ("meta-or-square-access-token", r"\bEAA[A-Z][A-Za-z0-9_-]{56,}",
     "no Facebook plugin; SquareOAuthDetector only knows sq0csp- secrets"),
    ("twitter-bearer-token", r"\bA{20,}[A-Za-z0-9%]{50,}", "no X/Twitter plugin"),
    ("shopify-token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b", "no Shopify plugin"),
    ("linear-api-key", r"\blin_(?:api|oauth)_[A-Za-z0-9]{40}\b", "no Linear plugin"),
    ("notion-token", r"\b(?:ntn_[A-Za-z0-9]{40,}|secret_[A-Za-z0-9]{43})\b", "no Notion plugin"),
    ("atlassian-api-token", r"\bATATT3[A-Za-z0-9_=-]{100,}", "no Atlassian plugin"),
    ("postman-api-key", r"\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b", "no Postman plugin"),
    ("grafana-token", r"\b(?:glsa_[A-Za-z0-9]{32}_[a-f0-9]{8}\b|glc_[A-Za-z0-9+/]{32,})",
     "no Grafana plugin"),
    ("sentry-dsn", r"\bhttps?://[a-f0-9]{32}(?::[a-f0-9]{32})?@[A-Za-z0-9.-]+/\d+",
     "no Sentry plugin (BasicAuthDetector needs user:pass@)"),
    ("sentry-auth-token", r"\bsntry[us]_[A-Za-z0-9_=+/-]{40,}", "no Sentry plugin"),
    ("new-relic-key", r"\b(?:NRAK-[A-Z0-9]{27}|[a-f0-9]{36}NRAL)\b", "no New Relic plugin"),
    ("mapbox-secret-token", r"\bsk\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{20,}",
     "no Mapbox plugin; JwtTokenDetector rejects it (2nd part is not JSON)"),
    ("private-key-block",
     r"-{4,5} ?BEGIN [A-Za-z0-9 ]*(?:PRIVATE|SECRET)[A-Za-z0-9 ]*-{4,5}|-----BEGIN OpenVPN Static key",
     "PrivateKeyDetector misses 'ENCRYPTED PRIVATE KEY', SSH2 (SECSH) and OpenVPN static keys"),
    ("putty-private-key", r"\bPuTTY-User-Key-File-\d+:", "PrivateKeyDetector only knows version 2"),
    ("age-secret-key", r"\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}\b", "no age plugin"),
    ("wireguard-private-key", r"(?im)^\s*PrivateKey\s*=\s*[A-Za-z0-9+/]{42,43}=", "no WireGuard plugin"),
    # --- generic rules ---
    ("hex-near-key",
     r"(?i)\b(?:key|hmac|salt)\b[^\n]{0,24}?(?-i:(?<![0-9A-Za-z])[0-9a-f]{32,}(?![0-9A-Za-z]))",
     "32+ lowercase hex right after 'key'/'hmac'/'salt': the hex entropy plugin would catch it, at the cost of every commit id"),
    ("url-userinfo-password",
     r"(?i)\b[a-z][a-z0-9+.-]{1,15}://[^\s:/@]*:(?![<{$*]|%\()[^\s/@]+@[^\s/@]+",
     "BasicAuthDetector misses an empty user (redis://:pw@) and passwords with !&*+=?#@"),
    ("query-or-dsn-password", r"(?i)[?&;]\s*(?:password|passwd|pwd|pass)=(?![<{$*]|%\()[^&;\s]+",
     "JDBC/ADO.NET/ODBC put the password in a key=value parameter, no plugin sees it"),
    ("authorization-header",
     r"(?i)\b(?:authorization|proxy-authorization):\s*(?:bearer|basic|token|ssws|api-?key|digest|hmac)\s+"
     r"(?![<{$])[A-Za-z0-9._~+/=-]{16,}", "opaque credentials in pasted curl commands"),
    ("credential-header", r"(?i)\bx-[\w-]{0,30}?(?:key|token|secret|auth)[\w-]{0,30}\s*:\s*(?![<{$])[A-Za-z0-9._~+/=-]{16,}",
     "X-Api-Key: ... style headers"),
    ("session-cookie",
     r"(?i)\b(?:session(?:id)?|sid|connect\.sid|jsessionid|phpsessid|_\w*session|remember_token|csrftoken)"
     r"\s*=\s*(?![<{$])[A-Za-z0-9%._~+/=-]{20,}", "a session cookie is a login"),
    ("crypt-hash",
     r"\$(?:apr1|1|5|6|y|gy|7|2[abxy]?|argon2(?:id|i|d)|scrypt|sha1|md5)(?:\$[^\s$]+){1,3}\$[./A-Za-z0-9+=]{16,}"
     r"|\bpbkdf2_\w+\$\d+\$[^\s$]+\$[A-Za-z0-9+/=]{20,}|\{SHA\}[A-Za-z0-9+/]{27}=",
     "htpasswd, /etc/shadow, bcrypt, argon2 and Django hashes crack offline"),
    ("pgpass-line", r"(?<![\w.:-])[\w.-]+:(?:\d{1,5}|\*):[\w*.-]+:[\w*.-]+:(?![*$<{])[^\s:]{4,}",
     "a ~/.pgpass line: host:port:db:user:password"),
    ("xml-password-element",
     r"(?i)<((?:\w+)?(?:password|passwd|secret|token|api_?key|access_?key|client_?secret))>(?![$<{])[^<\s]{4,}</\1>",
     "Maven settings.xml, .NET config"),
    ("mysql-inline-password", r"\bmysql\w*\b[^\n]*?(?<!\S)-p(?:'[^'\s]{4,}'|\"[^\"\s]{4,}\"|[^\s'\"]{4,})",
     "mysql -pSECRET on a command line"),
]

# A value that looks chosen by a person: a letter and a digit or symbol, not a reference,
# placeholder, option or the name of an algorithm a password is hashed or encoded with.
_TECH = r"(?:argon2\w*|pbkdf2\w*|sha-?\d+|md5|base(?:32|64)|utf-?8|https?2?|oauth2?|v\d[\w.]*|s3|ec2|k8s|\w+\d\.\d\w*)"
_HUMAN = (rf"(?![\"'`]?(?:[$<{{*\[(%-]|~/|\.{{1,2}}/|{_TECH}\b|https?://|/))"
          r"[\"'`]?(?=[^\s\"'`]{0,64}[A-Za-z])(?=[^\s\"'`]{0,64}[\d!@#$%^&*?~+])[^\s\"'`<>{}]{6,}")
_ARG = r"(?:\s+|\s*=\s*)"  # how a command line option takes its value
EXTRA_PATTERNS += [
    ("command-line-password", (
        rf"\bsshpass\s+-p\s*{_HUMAN}|\bredis-cli\b[^\n]*?\s-a\s+{_HUMAN}|\bldap\w+\b[^\n]*?\s-w\s+{_HUMAN}"
        rf"|\b(?:mongo\w*|docker\s+login|podman\s+login)\b[^\n]*?\s(?:-p|--password){_ARG}{_HUMAN}"
        rf"|\b(?:zip|7za?|unzip|rar|unrar)\b[^\n]*?\s-[pP]\s*{_HUMAN}|-pass(?:in|out)?\s+pass:{_HUMAN}"
        rf"|\bhtpasswd\b[^\n]*?\s-\w*b\w*\s+\S+\s+\S+\s+{_HUMAN}|\bsmbclient\b[^\n]*?\s-U\s*\S+%{_HUMAN}"
        rf"|\bnet\s+use\b[^\n]*?/user:\S+\s+{_HUMAN}"
        rf"|(?<!\S)--(?:[\w-]*-)?(?:password|passwd|pass|api-?key|apikey|token|secret){_ARG}{_HUMAN}"),
     "passwords given to sshpass, redis-cli, ldapsearch, mongo, docker login, zip, openssl, ..."),
    ("curl-user-password",
     r"\b(?:curl|wget|http)\b[^\n|]*?\s(?:-u|--user)(?:\s+|=)?['\"]?(?![$<{])[^\s:'\"]+:(?![$<{'\"\s])[^\s'\"]{3,}",
     "curl -u user:password"),
    ("default-account-password",
     r"\b(?:admin|administrator|root|sa|postgres|guest|elastic|jenkins|ubuntu|pi)\s?[:/]\s?"
     r"(?=\S{0,64}[A-Z])(?=\S{0,64}[a-z])(?=\S{0,64}\d)[^\s/:@]{6,}", "admin:Password1 with no keyword near it"),
    ("recovery-codes", r"(?i)\b(?:backup|recovery|2fa|mfa|one-time)\s+codes?\b[^\n]{0,80}?"
     r"\b(?=[a-z0-9-]*\d)(?=[a-z0-9-]*[a-z])[a-z0-9]{4,5}-[a-z0-9]{4,5}\b", "account recovery codes"),
]

_KW = (r"(?:pass(?:word|wd|phrase|code)?|pwd|pw|secret|token|creds?|credentials?|api[_ -]?key|apikey"
       r"|access[_ -]?key|secret[_ -]?key|private[_ -]?key|signing[_ -]?key|encryption[_ -]?key"
       r"|master[_ -]?key|license[_ -]?key|app(?:lication)?[_ -]key|client[_ -]?secret|auth|pat|login"
       r"|seed|community[_ -]string)")
_HUMAN_KW = r"(?:pass(?:word|wd|phrase|code)?|pwd|pw|login|creds?|credentials?)"  # values chosen by people
# bounded repetitions: an unbounded (?:[A-Za-z0-9]+[_.-])* is quadratic on long snake_case runs
_PRE = r"(?<![A-Za-z0-9])_?(?:[A-Za-z0-9]{1,40}[_.-]){0,6}(?:(?-i:[a-z][a-z0-9]{0,39}(?=[A-Z])))?(?:pg)?"
_POST = r"(?:[ _.-](?:token|key|secret|password|passwd|pwd|pw|codes?|string|pat))?(?:[_.-][A-Za-z0-9]{1,40}){0,6}(?![A-Za-z0-9])"
_GAP = r"(?:\s+[^\s:=\"'`]+){0,6}?"                     # "password for the lab router is ..."
_SEP = (r"(?:\s*[\"'\]]?\s*(?::=|=>|[:=])\s*|\s+(?:is|was)\s+)"
        r"(?:(?:now|still|currently|also|set to|changed to)\s+)?")
_V = r"[^\s\"'`<>{}]"                                    # one character of a value
_SWITCH = r"(?:[a-z](?=[A-Z0-9])|[A-Z](?=[a-z0-9])|[0-9](?=[A-Za-z]))"  # letter/digit/case change
_VALUE = (r"(?:[\w.@-]+ ?[/:] ?)?"                        # optional "user / " or "user:" before it
          r"[\"'`]?"
          r"(?![<{$*\[(%]|~/|\.{1,2}/|https?://)"         # placeholders, relative paths, URLs
          rf"(?!{_V}{{0,64}}?\[[^\]\s]{{0,64}}-)"                          # a regex character class
          r"(?!/[\w.-]+/[\w./-]*(?![^\s\"'`]))"            # absolute paths
          r"(?!(?:env|vault|ssm|op|arn|secretsmanager|sops|keychain|file):)"  # references
          rf"(?!{_V}{{0,80}}\.(?:pem|key|pub|crt|cer|p12|pfx|json|ya?ml|toml|env|txt|md|py|sh)\b)"  # file names
          # random-looking: 4+ class changes (tokens, hex, uuids) or upper+lower+digit (passwords);
          # this leaves identifiers such as argon2id, oauth2-proxy, SECRET_KEY_BASE_V2 alone
          rf"(?:(?=(?:{_V}{{0,64}}?{_SWITCH}){{4}})|(?={_V}{{0,64}}[a-z])(?={_V}{{0,64}}[A-Z])(?={_V}{{0,64}}\d))"
          rf"{_V}{{8,}}")
EXTRA_PATTERNS += [
    ("keyword-assignment", rf"(?i){_PRE}{_KW}{_POST}(?:{_GAP}{_SEP}|\s+)(?-i:{_VALUE})",
     "KeywordDetector needs quotes in ad-hoc mode (DB_PASSWORD=x, password: x, 'password is x' are missed)"),
    ("password-in-prose", rf"(?i)(?<![A-Za-z0-9]){_HUMAN_KW}{_POST}(?:{_GAP}{_SEP}|\s+)(?:[\w.@-]+ ?/ ?)?{_HUMAN}",
     "a password a person chose, after the word for it: 'the password is hunter2', 'pw for the nas: ...'"),
]


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
PLACEHOLDER_VALUE = re.compile(
    r"(?i)^(?:your[_-]?\w*|\w*[_-]here|replace[_-]?me|change[_-]?me|x{3,}|\*+|todo|tbd|"
    r"example|dummy|redacted|none|null)$")

# A key block is masked whole, from its BEGIN line to its END line (to the end of the text
# when the END line is missing): the body is the secret, not the header.
_KEY_BEGIN = re.compile(
    r"(-{4,5}) ?BEGIN ([A-Za-z0-9 ]*(?:PRIVATE|SECRET)[A-Za-z0-9 ]*|OpenVPN Static key V\d+) ?-{4,5}"
    r"|\bPuTTY-User-Key-File-\d+:")
_PUTTY_END = re.compile(r"\bPrivate-(?:MAC|Hash): *[0-9a-fA-F]*")


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


# -- invisible Unicode -----------------------------------------------------------------------

def _is_pictographic(cp: int) -> bool:
    # Approximation of Extended_Pictographic; a gate should use a real table
    # (e.g. the third-party `regex` module's \p{Extended_Pictographic}).
    return (0x1F000 <= cp <= 0x1FAFF or 0x2600 <= cp <= 0x27BF or 0x2300 <= cp <= 0x23FF
            or 0x2B00 <= cp <= 0x2BFF or 0x2194 <= cp <= 0x21AA
            or cp in (0xA9, 0xAE, 0x203C, 0x2049, 0x2122, 0x2139, 0x3030, 0x303D, 0x3297, 0x3299))


def _joins_script_letters(prev: str, nxt: str) -> bool:
    def ok(ch: str) -> bool:
        cp = ord(ch)
        script = (0x0600 <= cp <= 0x06FF or 0x0750 <= cp <= 0x077F or 0x08A0 <= cp <= 0x08FF
                  or 0xFB50 <= cp <= 0xFDFF or 0xFE70 <= cp <= 0xFEFF  # Arabic (Persian, Urdu)
                  or 0x0900 <= cp <= 0x0DFF)                         # Indic scripts
        return script and unicodedata.category(ch)[0] in "LM"
    return ok(prev) and ok(nxt)


def _selector_base_ok(cp: int, base: str) -> bool:
    """Whether a VS1-VS16 may follow ``base``: VS15/VS16 pick the text or emoji form of a
    symbol, digit or keycap base; VS1-VS14 pick glyph variants of CJK ideographs and math
    symbols. After a letter a selector shows nothing and can only carry hidden data."""
    b = ord(base)
    if cp >= 0xFE0E:
        return _is_pictographic(b) or base in "0123456789#*" or unicodedata.category(base) in ("So", "Sm")
    return (0x3400 <= b <= 0x9FFF or 0xF900 <= b <= 0xFAFF or 0x20000 <= b <= 0x3FFFF
            or unicodedata.category(base) in ("So", "Sm") or base == "0")


_ASCII_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def unicode_violations(text: str) -> list[str]:
    """Recommended rule; returns U+XXXX of every refused character."""
    return [code for _, code in unicode_violation_positions(text)]


def unicode_violation_positions(text: str) -> list[tuple[int, str]]:
    """(index, U+XXXX) of every refused character of ``text`` (CRLF counts as LF)."""
    text = text.replace("\r\n", "\n")  # normalise CRLF before the gate; a lone CR is refused
    if text.isascii() and not _ASCII_CONTROL.search(text):
        return []  # the common case, in C: nothing below can fire on plain ASCII
    bad = []
    for i, ch in enumerate(text):
        cp = ord(ch)
        prev = text[i - 1] if i else ""
        nxt = text[i + 1] if i + 1 < len(text) else ""
        if ch in "\t\n" or (cp < 0x80 and 0x20 <= cp < 0x7F):
            continue
        if cp == 0x200D:  # ZWJ: inside an emoji sequence, or between Arabic/Indic letters
            base = text[i - 2] if prev == "\ufe0f" and i >= 2 else prev
            emoji_before = base and (_is_pictographic(ord(base)) or 0x1F3FB <= ord(base) <= 0x1F3FF)
            if (emoji_before and nxt and _is_pictographic(ord(nxt))) or (
                    prev and nxt and _joins_script_letters(prev, nxt)):
                continue
        elif cp == 0x200C:  # ZWNJ: only between Arabic/Indic letters (Persian, Hindi)
            if prev and nxt and _joins_script_letters(prev, nxt):
                continue
        elif 0xFE00 <= cp <= 0xFE0F:  # one variation selector after a base that has variants
            if prev and not (0xFE00 <= ord(prev) <= 0xFE0F) and _selector_base_ok(cp, prev):
                continue
        elif 0x180B <= cp <= 0x180F:  # Mongolian selectors and vowel separator, in Mongolian
            if prev and 0x1820 <= ord(prev) <= 0x18AF:
                continue
        elif not (_IGNORABLE.match(ch) or unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Zl", "Zp")):
            continue
        bad.append((i, f"U+{cp:04X}"))
    return bad


# -- injection: instructions aimed at an agent, fake roles, exfiltration ------------------
#
# Phrases, not words: "ignore the previous build's cache warnings" is a fine note, "ignore
# all previous instructions" is not. English rules run on the skeleton (and its leetspeak
# and letter-spaced readings); rules for other languages on ``plain``. Every rule names its kind.

def _concept(verb: str, qual: str, noun: str, gap: int = 40, b: str = r"\b") -> str:
    """verb ... (qualifier ... noun | noun ... qualifier), or qualifier ... noun ... verb
    (verb-final languages), each within one sentence."""
    s = r"[^.\n。！？!?]"
    v, q, n = (rf"{b}(?:{x})" for x in (verb, qual, noun))
    return (rf"(?i){v}{s}{{0,{gap}}}?(?:{q}{s}{{0,25}}?{n}|{n}{s}{{0,25}}?{q})|{q}{s}{{0,25}}?{n}{s}{{0,{gap}}}?{v}")


_AGENT = r"(?:you|the agent|agents?|assistant|ai|model|llm|claude|copilot|gpt)"
_OVERRIDE_V = (r"(?:ignore|disregard|forget|override|discard|abandon|bypass|nullify|set aside|put aside|"
               r"throw (?:out|away)|pay no (?:attention|heed) to|stop (?:following|obeying)|no longer (?:follow|obey))")
_OVERRIDE_N = (r"(?:instructions?|prompts?|directives?|guidelines|guidance|guardrails|"
               r"(?:what|everything|anything) (?:you(?:'ve| have)? (?:were|been) |was )?(?:told|given|instructed))")
_YOUR = (r"(?:your|the (?:user|developer|operator|system)'?s?|you (?:were|are|have been) given|given to you|"
         r"(?:\w+ )?gives? you)")
_RISKY = (r"(?:push(?:es|ing)? (?:\w+ )?(?:directly |straight )?to (?:main|master|prod)|force[- ]push|--force|--no-verify|"
          r"skip\w* (?:the )?(?:code )?(?:review|tests|ci|checks?|confirmation)|merge (?:every|all)|rm -rf|"
          r"delete|drop (?:the )?(?:database|table)|disable|\.env\b|secrets?|credentials|ssh|without (?:asking|telling|review))")
INJECTION_PATTERNS: list[tuple[str, str]] = [
    ("instruction override", _concept(
        _OVERRIDE_V, rf"previous|prior|above|earlier|preceding|original|initial|former|all|any|every|{_YOUR}",
        _OVERRIDE_N, gap=50)),
    ("instruction override", rf"(?i)\b{_OVERRIDE_V}\b[^.\n]{{0,50}}?\b{_YOUR}\b[^.\n]{{0,20}}?\b(?:rules|orders|"
     r"restrictions|constraints|polic(?:y|ies)|programming)\b"),
    ("instruction override", r"(?i)\bignore the above\b|\bforget everything\b"),
    ("instruction override",
     r"(?i)\b(?:(?:your|the system'?s?) (?:\w+ )?(?:instructions|rules|guidelines|directives|prompt|guidance|orders)|"
     r"(?:instructions|rules|guidelines|directives|orders) (?:that )?you (?:were|have been) given|"
     r"what(?:ever)? you (?:were|have been|'ve been) (?:told|given|instructed))\b[^.\n]{0,60}?"
     r"\b(?:no longer appl|(?:is|are|were|was) (?:now )?(?:void|cancel+ed|revoked|obsolete|superseded|overridden|"
     r"null|invalid|suspended|lifted|a test|fake))"),
    ("instruction override",
     r"(?i)\bnew instructions?\s*:|\byour (?:new|real|actual|true) (?:task|instructions?|goal|orders|job|mission)\b|"
     r"\bthe (?:real|actual|true) (?:task|job|instructions?|goal)\s*(?::|is\b|are\b)|"
     r"\bdecode\b[^.\n]{0,20}\b(?:and|then)\s+(?:follow|run|execute|obey|do)\b"),
    ("instruction override",
     r"(?i)\b(?:highest|top|first|overriding)[- ]priority (?:directive|instruction|rule|order|task)\b|"
     r"\btreat (?:this|these) (?:note|memory|memories|message|text)s? as (?:an? |your )?(?:instruction|directive|"
     r"order|command|system|highest|top)|\b(?:this|these) (?:note|memory|memories|message|text)s?\b[^.\n]{0,20}?"
     r"\b(?:supersedes?|overrides?|replaces?|takes? precedence over|outranks?)\b"),
    ("role reassignment",
     r"(?i)\byou are now\b[^.\n]{0,40}?\b(?:agent|assistant|mode|\w*gpt|bot|ai|without|"
     r"unrestricted|no longer|free to|allowed)\b|\byou (?:are|will be) no longer (?:bound|restricted|limited)"),
    ("role reassignment",
     rf"(?i)\b(?:from now on,? {_AGENT}|from now on you|pretend (?:to be|you are)|"
     rf"act as (?:if you were )?(?:the|an?) (?:admin|owner|root|maintainer)|"
     rf"(?:god|jailbreak|dan) mode)\b"),
    ("agent addressed", rf"(?i)\b(?:any|every|dear|attention|note to(?: any| the)?|hey)\s+(?:coding )?"
     rf"(?:ai|llm|agent|assistant|model|bot|copilot|claude|chatgpt|gpt)s?\b[^\n]{{0,80}}?\b{_RISKY}"),
    ("fake authority", rf"(?i)\b(?:the user|they) (?:has|have) (?:already )?(?:pre-?)?(?:approved|authori[sz]ed|allowed)\b"
     rf"[^.\n]{{0,30}}?(?:{_RISKY}|force|merge|deploy)"),
    ("fake role or system marker",
     r"<\|(?:im_start|im_end|endoftext|system|user|assistant|eot_id|start_header_id)\|>|"
     r"\[INST\][^\[\n]{10,}\[/INST\]|<</?SYS>>|</?system>|"
     r"</(?:memory|context|instructions?)>\s*</?[a-z]"),
    ("fake role or system marker", r"(?im)^\s*#{1,6}\s*system\s*:"),
    ("fake role or system marker", r"(?m)^\s*(?:SYSTEM|System)\s*:"),
    ("fake role or system marker",
     r"(?ms)^\s*(?:Human|User|Assistant)\s*:\s*\S.*?^\s*(?:Human|User|Assistant)\s*:"),
    ("fence escape", r"(?i)<\s*/\s*git-mem[\w-]*\s*>\s*\n\s*(?:#|\*\*|<|[\w ]{0,20}:)"),
    ("hidden instruction", r"(?is)<!--.{0,200}?\b(?:agent|assistant|system|override|instruction)\b.{0,200}?-->"),
    ("exfiltration",
     r"(?i)\b(?:cat|print|post|send|upload|include|paste|share|leak|reveal|exfiltrate|show|dump|display|email|"
     r"transmit|forward)\b[^.\n]{0,60}?(?:\.env\b|~/\.ssh|id_(?:rsa|ed25519|ecdsa)|\.aws/credentials|\.netrc|printenv|"
     r"environment variables|env vars|system prompt|\bsecrets\b|\bcredentials\b|\bpasswords\b|"
     r"\b(?:api|access|auth|secret|private|ssh|deploy|signing|bearer|session|refresh|github|gitlab|npm|oauth)"
     r"[ _-](?:keys?|tokens?)\b(?! (?:count|per|limit|budget|usage|length|window|endpoint|cache|rotation|format)))"),
    ("exfiltration",
     r"(?i)(?:\.env\b|~/\.ssh|id_(?:rsa|ed25519)|\.aws/credentials|\.netrc)[^.\n]{0,40}?"
     r"\b(?:post|send|upload|paste|share|include|comment|email)\b"),
    ("exfiltration",
     r"(?i)\$\(\s*(?:printenv|env\b|cat\s+[^)]*(?:\.env|\.netrc|\.ssh|credentials|\.aws|id_\w+))|"
     r"\benv\s*\|\s*base64\b"),
    ("remote code", r"(?i)\bcurl\b[^\n|]{0,200}\|\s*(?:sudo\s+)?(?:ba|z)?sh\b|\bwget\b[^\n|]{0,200}\|\s*(?:sudo\s+)?(?:ba|z)?sh\b"),
    ("exfiltration", r"(?i)!\[[^\]]*\]\(https?://[^)]*\{[^)]*\}"),
    ("safety bypass",
     r"(?i)\b(?:disable|skip|bypass|turn off)\b[^.\n]{0,40}?\b(?:safety|security|branch protection|"
     r"review|confirmation|the gate|hooks?)\b[^.\n]{0,60}?\b(?:agent|you|always|every|without)\b"),
    ("safety bypass", r"(?i)\b(?:safety|security) (?:checks? |review )?(?:are|is) (?:disabled|off|not needed)"),
    ("safety bypass", r"(?i)GIT_MEM_GATE\s*=\s*off|--no-verify on every"),
    ("concealment",
     r"(?i)\b(?:do not|don't|never) (?:tell|mention|show|inform|alert|notify)\b[^.\n]{0,30}?\b(?:the )?user\b|"
     r"\bwithout (?:telling|informing|asking|notifying|alerting) (?:the )?user\b"),
    ("concealment", r"(?i)\bquietly\b[^.\n]{0,40}?\b(?:replace|delete|remove|change|add)\b"),
    ("self-propagation", r"(?i)\bcopy this (?:exact )?(?:note|memory|text)\b[^.\n]{0,40}?\b(?:every|all|each)\b"),
]
# Written without spaces: "i g n o r e  a l l ...", "i.g.n.o.r.e", after leetspeak is undone.
_SQUEEZED = re.compile(
    r"(?:ignore|disregard|forget)(?:all|any|the|your)*(?:previous|prior|above|earlier)(?:instructions|prompts|"
    r"directives|guidelines)|youarenow(?:an?)?(?:unrestricted|jailbroken|dan|agentwithout|assistantwithout)")


# (verbs, qualifiers, nouns) of "ignore the previous instructions"; a role change; hiding
# from the user; asking for secrets. Accents are stripped before matching (plain()).
_LANGS: dict[str, list[tuple[str, str]]] = {
    "fr": [("instruction override", _concept(
        r"ignor\w*|oubli\w*|ne (?:tiens?|tenez) (?:plus |pas )?compte|fai\w* abstraction",
        r"precedent\w*|anterieur\w*|ci-dessus|tes|vos|toutes? les|tous les|du systeme|initia\w*|d'origine",
        r"instructions?|consignes?|directives?|regles?|prompts?|ordres?")),
        ("role reassignment", r"(?i)\b(?:tu es|vous etes) (?:maintenant|desormais|a present)\b[^.\n]{0,20}?"
         r"\b(?:agent|assistant|ia|bot|modele|sans|libre)"),
        ("concealment", r"(?i)\bne (?:dis|dites|mentionne\w*|montre\w*|previen\w*) (?:rien|pas)\b[^.\n]{0,30}?utilisateur"),
        ("exfiltration", r"(?i)\b(?:affich|montr|revel|envo[iy]|donn|imprim|publi|transmet|partag|coll)\w*\b"
         r"[^.\n]{0,40}?(?:prompt (?:du )?systeme|\.env\b|identifiants|mots? de passe|cles? (?:api|ssh|privee)|secrets)")],
    "de": [("instruction override", _concept(
        r"ignorier\w*|vergiss\w*|vergesst|missacht\w*|uberschreib\w*|verwirf\w*",
        r"vorherig\w*|bisherig\w*|fruher\w*|obig\w*|alle\w*|dein\w*|ihre\w*|ursprung\w*|des systems",
        r"anweisung\w*|instruktion\w*|regeln|vorgaben|befehle|richtlinien|prompts?|systemprompt")),
        ("role reassignment", r"(?i)\b(?:du bist|sie sind) (?:jetzt|nun|ab sofort|ab jetzt)\b[^.\n]{0,20}?"
         r"\b(?:agent|assistent|ki|bot|modell|ohne|frei)"),
        ("concealment", r"(?i)\b(?:sag|erzahl|verrat)\w* (?:dem|der|den) (?:benutzer|nutzer|anwender)\w* nichts|"
         r"\bohne (?:den |die )?(?:benutzer|nutzer)\w* zu (?:fragen|informieren)"),
        ("exfiltration", r"(?i)\b(?:zeig|send|schick|gib|verrat|poste|lade)\w*\b[^.\n]{0,40}?"
         r"(?:system-?prompt|\.env\b|zugangsdaten|passworter|schlussel|secrets|api-?keys)")],
    "es": [("instruction override", _concept(
        r"ignor\w*|olvid\w*|omit\w*|descart\w*|haz caso omiso|no hagas caso",
        r"anterior\w*|previ\w*|tus|sus|todas? las|todos los|del sistema|original\w*",
        r"instrucciones|instruccion|indicaciones|reglas|directrices|ordenes|prompts?")),
        ("role reassignment", r"(?i)\b(?:ahora|a partir de ahora|desde ahora) (?:eres|es)\b[^.\n]{0,20}?"
         r"\b(?:agente|asistente|ia|bot|modelo|sin|libre)"),
        ("concealment", r"(?i)\bno (?:le )?(?:digas|cuentes|menciones|informes|avises)\b[^.\n]{0,30}?usuario|"
         r"\bsin (?:decirle|avisar|preguntar)\w*[^.\n]{0,10}?usuario"),
        ("exfiltration", r"(?i)\b(?:muestr|envi|mand|revel|imprim|sub|compart|public)\w*\b[^.\n]{0,40}?"
         r"(?:prompt del sistema|\.env\b|credenciales|contrasenas?|claves|secretos|tokens)")],
    "it": [("instruction override", _concept(
        r"ignor\w*|dimentic\w*|trascur\w*|non tenere conto",
        r"precedent\w*|tutte le|tutti i|tue|tuoi|del sistema|original\w*",
        r"istruzion\w*|regole|direttive|indicazioni|prompts?")),
        ("role reassignment", r"(?i)\b(?:ora|adesso|d'ora in poi) sei\b[^.\n]{0,20}?\b(?:agente|assistente|ia|bot|"
         r"modello|senza|libero)"),
        ("concealment", r"(?i)\bnon dire (?:niente|nulla)\b[^.\n]{0,20}?utente|\bsenza dirlo all'utente"),
        ("exfiltration", r"(?i)\b(?:mostr|invi|rivel|caric|stamp|condivid)\w*\b[^.\n]{0,40}?"
         r"(?:prompt di sistema|\.env\b|credenziali|password|chiavi|segreti)")],
    "pt": [("instruction override", _concept(
        r"ignor\w*|esquec\w*|esquec\w*|desconsider\w*|descart\w*",
        r"anterior\w*|previ\w*|todas as|todos os|suas|seus|tuas|do sistema|original\w*",
        r"instrucoes|instrucao|regras|diretrizes|ordens|prompts?")),
        ("role reassignment", r"(?i)\b(?:voce|tu) (?:agora )?(?:e|es)(?: agora)?\b[^.\n]{0,20}?\b(?:agente|assistente|"
         r"ia|bot|modelo|sem|livre)"),
        ("concealment", r"(?i)\bnao (?:diga|conte|mencione|informe|avise)\b[^.\n]{0,30}?usuario"),
        ("exfiltration", r"(?i)\b(?:mostr|envi|revel|carreg|publi|compartilh|imprim)\w*\b[^.\n]{0,40}?"
         r"(?:prompt do sistema|\.env\b|credenciais|senhas?|chaves|segredos)")],
    "nl": [("instruction override", _concept(
        r"negeer\w*|vergeet\w*|ignoreer\w*", r"vorige|eerdere|voorgaande|alle|je|jouw|uw|oorspronkelijke",
        r"instructies|regels|opdrachten|aanwijzingen|prompts?")),
        ("role reassignment", r"(?i)\b(?:je bent nu|vanaf nu ben je)\b[^.\n]{0,20}?\b(?:agent|assistent|ai|bot|model|zonder)")],
    "pl": [("instruction override", _concept(
        r"zignoruj\w*|ignoruj\w*|zapomnij\w*|pomin\w*", r"poprzedni\w*|wczesniejsz\w*|wszystki\w*|swoje|twoje",
        r"instrukcj\w*|polecen\w*|zasad\w*|regul\w*|wytyczn\w*|prompt\w*")),
        ("role reassignment", r"(?i)\b(?:jestes teraz|od teraz jestes|teraz jestes)\b")],
    "tr": [("instruction override", _concept(
        r"yok say\w*|gormezden gel\w*|unut\w*|dikkate alma\w*", r"onceki|tum|butun|sistem\w*",
        r"talimat\w*|kural\w*|yonerge\w*|komut\w*|istem\w*"))],
    "ru": [("instruction override", _concept(
        r"игнорир\w*|проигнорир\w*|забуд\w*|забыть|не обращаи внимания|отбрось\w*|пренебрег\w*|не учитываи\w*",
        r"предыдущ\w*|прежн\w*|все\w*|свои\w*|твои\w*|ваши\w*|ранее|систем\w*|исходн\w*",
        r"инструкци\w*|указани\w*|правил\w*|команд\w*|директив\w*|промпт\w*|ограничени\w*")),
        ("role reassignment", r"(?i)\b(?:теперь ты|ты теперь|с этого момента ты)\b[^.\n]{0,20}?"
         r"(?:ассистент|агент|бот|модел|помощник|без ограничени|свободн)"),
        ("concealment", r"(?i)\bне (?:говори|сообщаи|рассказываи|упоминаи)\w*\b[^.\n]{0,20}?пользовател"),
        ("exfiltration", r"(?i)\b(?:покажи|отправ\w*|выведи|загрузи|опубликуи|перешли|раскрои)\b[^.\n]{0,40}?"
         r"(?:системн\w* (?:промпт|подсказк|инструкци)|\.env\b|парол|ключ|секрет|токен|учетн\w* данн|~/\.ssh)")],
    "zh": [("instruction override", _concept(
        r"忽略|无视|忽视|忘记|忘掉|不要理会|不要遵守|别管|抛开|放弃", r"之前|以前|先前|上面|上述|此前|所有|全部|你的|原来|原有|系统",
        r"指令|指示|规则|说明|提示|命令|要求|设定|约束|限制", gap=12, b="")),
        ("role reassignment", r"你现在是|从现在(?:开始|起)[，,]?你(?:是|要|将)|你已经不再是"),
        ("concealment", r"(?:不要|别|不准|不得)(?:告诉|通知|提醒|让)(?:用户|使用者)"),
        ("exfiltration", r"(?:显示|输出|打印|发送|发到|泄露|上传|透露|展示)[^。\n]{0,15}?(?:系统提示|\.env|密钥|密码|凭据|凭证|令牌|秘钥|私钥)|"
         r"(?:\.env|密钥|密码|凭据|凭证|令牌|私钥|系统提示)[^。\n]{0,15}?(?:发送|发到|上传|泄露|贴到|发给)")],
    "ja": [("instruction override", _concept(
        r"無視|忘れ", r"これまで|以前|前の|上記|今まで|すべて|全て|あなたの", r"指示|命令|ルール|指令|プロンプト|制約",
        gap=12, b="")),
        ("role reassignment", r"(?:あなたは|君は)(?:今から|これから|今や)|今からあなたは"),
        ("concealment", r"ユーザー(?:に|には)(?:言わない|伝えない|知らせない|教えない|黙って|内緒)"),
        ("exfiltration", r"(?:システムプロンプト|\.env|パスワード|認証情報|秘密鍵|APIキー|トークン)[^。\n]{0,20}?(?:送信|送って|表示|アップロード|公開|教えて)")],
    "ko": [("instruction override", _concept(
        r"무시|잊어", r"이전|앞의|위의|모든|기존", r"지시|명령|규칙|지침|프롬프트", gap=12, b="")),
        ("role reassignment", r"(?:너는|당신은) 이제|이제 (?:너는|당신은)"),
        ("concealment", r"사용자(?:에게|한테)[^.\n]{0,8}?(?:말하지|알리지) 마"),
        ("exfiltration", r"(?:시스템 프롬프트|\.env|비밀번호|자격 증명|API 키|비밀 키|개인 키|토큰)[^.\n]{0,20}?(?:보내|전송|업로드|공개|출력)")],
}


# A sentence in a language has some of its commonest words (or its script): a language's
# rules are compiled and run only on a text that has them (each costs ~1 ms to compile).
_HINTS = {
    "fr": r"les|des|est|une|et|tes|vos|tu|vous|du|ne|pas|le|la", "de": r"der|die|das|und|nicht|du|dem|den|alle|ist",
    "es": r"las|los|el|y|tus|del|ahora|eres|no|le|la", "it": r"le|il|di|e|sei|tutte|gli|non|ora|adesso",
    "pt": r"as|os|e|voce|do|da|nao|todas|agora", "nl": r"de|het|en|je|alle|een|nu", "pl": r"i|w|na|sie|jestes|teraz",
    "tr": r"ve|bu|tum|onceki|bir|yok", "ru": "[а-я]", "zh": "[\u4e00-\u9fff]", "ja": "[\u3040-\u30ff]",
    "ko": "[\uac00-\ud7af]"}
_HINT = re.compile("|".join(rf"(?P<{k}>{v})" if v.startswith("[") else rf"(?P<{k}>\b(?:{v})\b)"
                            for k, v in _HINTS.items()), re.IGNORECASE)


@functools.cache
def _english_rules() -> list[tuple[str, re.Pattern[str]]]:
    return [(kind, re.compile(rx)) for kind, rx in INJECTION_PATTERNS]


@functools.cache
def _language_rules(lang: str) -> list[tuple[str, re.Pattern[str]]]:
    return [(kind, re.compile(rx)) for kind, rx in _LANGS[lang]]


def _languages(text: str) -> list[str]:
    return sorted({m.lastgroup for m in _HINT.finditer(text) if m.lastgroup})


# "never print secrets in CI logs" warns against what the rule looks for
_NEGATABLE = {"exfiltration", "safety bypass", "remote code"}
_NEGATION = re.compile(r"(?i)\b(?:never|don't|do not|must not|mustn't|should not|shouldn't|avoid|not)\b[^.;\n]*$")
_LEET_PAIR = re.compile(r"[A-Za-z][0-9@$|!]|[0-9@$|!][A-Za-z]")
_LEET_WORD = re.compile(r"[A-Za-z0-9@$|!]+")
_LEET = (str.maketrans("0134578@$|!", "oieastbasli"), str.maketrans("0134578@$|!", "oleastbasli"))
_ENCODED = re.compile(r"[A-Za-z0-9+/_-]{20,}={0,2}|(?:[0-9a-fA-F]{2}){12,}")
_READABLE = re.compile(r"[A-Za-z][a-z]+(?: [A-Za-z.~/-][\w.~/-]*){2,}")


def _readings(text: str) -> list[str]:
    """The English rules' views of ``text``: its skeleton, with leetspeak undone."""
    sk = skeleton(text)
    out = [sk]
    if sum(1 for m in _LEET_WORD.finditer(sk) if _LEET_PAIR.search(m.group())) >= 2:  # one "py3" is not leetspeak
        out += [_LEET_WORD.sub(lambda m, t=t: m.group().translate(t) if _LEET_PAIR.search(m.group())  # type: ignore[misc]
                               else m.group(), sk) for t in _LEET]
    return out


def _decoded(text: str) -> list[str]:
    """Base64 and hex payloads of ``text`` that decode to readable text."""
    out = []
    for m in _ENCODED.finditer(text):
        token = m.group()
        try:
            if len(token) % 2 == 0 and all(c in "0123456789abcdefABCDEF" for c in token):
                raw = bytes.fromhex(token)
            else:
                raw = base64.b64decode(token.replace("-", "+").replace("_", "/") + "=" * (-len(token) % 4))
            s = raw.decode("utf-8")
        except (binascii.Error, ValueError):
            continue
        if _READABLE.search(s) and sum(c.isprintable() or c in "\n\t" for c in s) >= 0.95 * len(s):
            out.append(s)
    return out


_FENCE_TAG = re.compile(r"(?i)<\s*/?\s*git\s*-\s*mem")


@dataclass(frozen=True)
class Finding:
    """Why a text may not be stored: the kind of finding and where (never the secret)."""

    category: str  # secret | injection | unicode
    kind: str  # e.g. "GitHubTokenDetector", "instruction override", "U+202E"
    line: int  # 1-based line of the text
    column: int  # 1-based column (0 when unknown)

    def describe(self) -> str:
        where = f"line {self.line}" + (f", column {self.column}" if self.column else "")
        return f"{self.category} ({self.kind}) at {where}"


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def scan_unicode(text: str) -> list[Finding]:
    text = text.replace("\r\n", "\n")
    out = []
    for i, code in unicode_violation_positions(text):
        line, col = _line_col(text, i)
        name = unicodedata.name(text[i], "unnamed")
        out.append(Finding("unicode", f"{code} {name.lower()}", line, col))
    return out


def scan_injection(text: str, _depth: int = 0) -> list[Finding]:
    """Injection findings; a finding in a folded reading of the text is placed on the
    line where that reading found it (folding keeps line breaks)."""
    english = _english_rules()
    out: list[Finding] = []
    kinds: set[str] = set()

    def found(kind: str, where: str, offset: int) -> None:
        if kind not in kinds:
            kinds.add(kind)
            out.append(Finding("injection", kind, *_line_col(where, offset)))

    readings = _readings(text)
    for reading in readings:
        for kind, rx in english:
            if kind in kinds:
                continue
            for m in rx.finditer(reading):
                if kind not in _NEGATABLE or not _NEGATION.search(reading, max(0, m.start() - 40), m.start()):
                    found(kind, reading, m.start())
                    break
        squeezed = re.sub(r"[^a-z]", "", reading.lower())
        if "instruction override" not in kinds and _SQUEEZED.search(squeezed):
            found("instruction override", reading, 0)
    pl = plain(text)
    for lang in _languages(pl):
        for kind, rx in _language_rules(lang):
            if kind not in kinds and (hit := rx.search(pl)):
                found(kind, pl, hit.start())
    if len(_FENCE_TAG.findall(readings[0])) > len(_FENCE_TAG.findall(text)):
        tag = _FENCE_TAG.search(readings[0])
        found("look-alike fence", readings[0], tag.start() if tag else 0)
    if _depth == 0:
        for payload in _decoded(text):
            for f in scan_injection(payload, 1):
                found(f"{f.kind}, encoded", text, 0)
    return out


# Bump when any rule here changes: cached verdicts of older versions are redone.
GATE_VERSION = 2


def version() -> str:
    """This gate's rules and the scanner's version, without importing the scanner."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as dist_version

    try:
        ds = dist_version("detect-secrets")
    except PackageNotFoundError:
        ds = "none"
    return f"gate-{GATE_VERSION}/detect-secrets-{ds}"


_DS: dict[str, Any] = {}


def _detect_secrets() -> dict[str, Any]:
    """detect-secrets, configured once per process (imported lazily: ~120 ms)."""
    if not _DS:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.core.scan import scan_line
        from detect_secrets.settings import Settings, cache_bust, configure_settings_from_baseline

        # The mapping's value type is an unbound TypeVar in detect-secrets' hints: name it here.
        classes: dict[str, type[Any]] = get_mapping_from_secret_type_to_class()
        plugins = sorted(c.__name__ for c in classes.values())
        drop = {"Base64HighEntropyString", "HexHighEntropyString", "IPPublicDetector"}
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
_MAYBE_DS = re.compile(
    r"://[^\s/@]*:|BEGIN|(?i:pass|pwd|secret|token|key|auth|cred|contrase)[\w.-]{0,40}[\"'\]]?\s*(?:[:=]|=>|!=)")
_LONG_TOKEN = re.compile(r"[A-Za-z0-9+/_=.\-]{16,}")


def _needs_detect_secrets(text: str) -> bool:
    """A keyword in an assignment, a URL with a password, a key block, or a long token
    with a digit in it (found token by token: a lookahead per position is quadratic)."""
    return bool(_MAYBE_DS.search(text)) or any(
        any(c.isdigit() for c in m.group()) for m in _LONG_TOKEN.finditer(text))
_MAYBE_SECRET = re.compile(r"(?i)\d|[$%@<]|pass|secret|token|key|auth|pwd|\bpw\b|cred|login|seed|codes?\b|community")


def scan_secrets(text: str) -> list[tuple[Finding, tuple[int, int] | None]]:
    """Secret findings, each with the (start, end) span of the value when known."""
    for value in DOCUMENTED_EXAMPLES:  # blanked with spaces: offsets stay true
        text = text.replace(value, " " * len(value))
    out: list[tuple[Finding, tuple[int, int] | None]] = []
    if not _MAYBE_SECRET.search(text):
        return out  # no keyword, no digit, no symbol: no pattern can fire
    if _needs_detect_secrets(text):
        out += _scan_with_detect_secrets(text)
    for name, rx, _ in EXTRA_COMPILED:
        for m in rx.finditer(text):
            line, col = _line_col(text, m.start())
            out.append((Finding("secret", name, line, col), (m.start(), m.end())))
    for start, end in key_block_spans(text):  # the whole block is the secret
        out.append((Finding("secret", "private-key-block", *_line_col(text, start)), (start, end)))
    return out


def _scan_with_detect_secrets(text: str) -> list[tuple[Finding, tuple[int, int] | None]]:
    ds = _detect_secrets()
    out: list[tuple[Finding, tuple[int, int] | None]] = []
    offset = 0
    for n, line in enumerate(text.split("\n"), start=1):
        if _needs_detect_secrets(line):
            for secret in ds["scan_line"](line):
                value = secret.secret_value or ""
                if secret.type == "Secret Keyword" and PLACEHOLDER_VALUE.match(value):
                    continue
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


def scan(text: str) -> list[Finding]:
    """Every reason ``text`` may not enter the log (empty: it may)."""
    findings = scan_unicode(text) + scan_injection(text)
    findings += [f for f, _ in scan_secrets(text)]
    return findings


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

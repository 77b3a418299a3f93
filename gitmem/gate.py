"""The write gate: what may enter the log.

A memory is pushed to every clone and pasted into every teammate's agent, so
before any op is written its text and fields are checked for
- secrets: detect-secrets (its plugins minus the two entropy detectors, which
  fire on every commit id and checksum) plus targeted patterns for formats it
  has no plugin for and three generic rules for shapes its plugins miss in free
  text (see fixtures/gate/README.md and scripts/gate_study.py for the
  measurements: 125/125 fake secrets refused, 2/281 risky-looking notes);
- prompt-injection phrasing: instructions aimed at an agent, fake role or
  system markers, exfiltration requests;
- invisible or direction-changing Unicode and control characters.

``scan(text)`` returns findings that name the kind and where it is, never the
secret itself; ``redact(text)`` masks what the secret detectors found.
detect-secrets costs ~120 ms to import, so it is imported only here, only
when something is written: never on the read path.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any

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
    ("private-key-pem-any", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----",
     "PrivateKeyDetector misses 'ENCRYPTED PRIVATE KEY' and other labels"),
    ("putty-private-key", r"\bPuTTY-User-Key-File-\d+:", "PrivateKeyDetector only knows version 2"),
    ("age-secret-key", r"\bAGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}\b", "no age plugin"),
    ("wireguard-private-key", r"(?im)^\s*PrivateKey\s*=\s*[A-Za-z0-9+/]{42,43}=",
     "no WireGuard plugin"),
    # --- generic rules ---
    ("hex-near-key",
     r"(?i)\b(?:key|hmac|salt)\b[^\n]{0,24}?(?-i:(?<![0-9A-Za-z])[0-9a-f]{32,}(?![0-9A-Za-z]))",
     "32+ lowercase hex right after 'key'/'hmac'/'salt': the hex entropy plugin would catch it, at the cost of every commit id"),
    ("url-userinfo-password",
     r"(?i)\b[a-z][a-z0-9+.-]{1,15}://[^\s:/@]*:(?![<{$*]|%\()[^\s/@]+@[^\s/@]+",
     "BasicAuthDetector misses an empty user (redis://:pw@) and passwords with !&*+=?#@"),
    ("query-or-dsn-password",
     r"(?i)[?&;]\s*(?:password|passwd|pwd|pass)=(?![<{$*]|%\()[^&;\s]+",
     "JDBC/ADO.NET/ODBC put the password in a key=value parameter, no plugin sees it"),
    ("authorization-header", r"(?i)\bauthorization:\s*(?:bearer|basic|token)\s+(?![<{$])[A-Za-z0-9._~+/=-]{16,}",
     "opaque bearer/basic credentials in pasted curl commands"),
    ("mysql-inline-password", r"\bmysql\w*\b[^\n]*?(?<!\S)-p(?:'[^'\s]{4,}'|\"[^\"\s]{4,}\"|[^\s'\"]{4,})",
     "mysql -pSECRET on a command line"),
]

_KW = (r"(?:pass(?:word|wd|phrase)?|pwd|pw|secret|token|creds?|credentials?|api[_ -]?key|apikey|access[_ -]?key"
       r"|secret[_ -]?key|private[_ -]?key|signing[_ -]?key|encryption[_ -]?key|master[_ -]?key"
       r"|license[_ -]?key|app(?:lication)?[_ -]key|client[_ -]?secret|auth|pat)")
# bounded repetitions: an unbounded (?:[A-Za-z0-9]+[_.-])* is quadratic on long snake_case runs
_NAME = (rf"(?<![A-Za-z0-9])(?:[A-Za-z0-9]{{1,40}}[_.-]){{0,6}}(?:pg)?{_KW}"  # DB_PASSWORD, PGPASSWORD
         rf"(?:[_.-][A-Za-z0-9]{{1,40}}){{0,6}}(?![A-Za-z0-9])")
_GAP = r"(?:\s+[^\s:=\"'`]+){0,4}?"                     # "password for the lab router is ..."
_SEP = r"(?:\s*[\"'\]]?\s*(?::=|=>|[:=])\s*|\s+(?:is|was)\s+)"
_V = r"[^\s\"'`<>{}]"                                    # one character of a value
_SWITCH = r"(?:[a-z](?=[A-Z0-9])|[A-Z](?=[a-z0-9])|[0-9](?=[A-Za-z]))"  # letter/digit/case change
_VALUE = (r"(?:[\w.@-]+ ?[/:] ?)?"                        # optional "user / " or "user:" before it
          r"[\"'`]?"
          r"(?![<{$*\[(%]|~/|\.{1,2}/|https?://)"         # placeholders, relative paths, URLs
          r"(?!/[\w.-]+/[\w./-]*(?![^\s\"'`]))"            # absolute paths
          r"(?!(?:env|vault|ssm|op|arn|secretsmanager|sops|keychain|file):)"  # references
          rf"(?!{_V}*\.(?:pem|key|pub|crt|cer|p12|pfx|json|ya?ml|toml|env|txt|md|py|sh)\b)"  # file names
          # random-looking: 4+ class changes (tokens, hex, uuids) or upper+lower+digit (passwords);
          # this leaves identifiers such as argon2id, oauth2-proxy, SECRET_KEY_BASE_V2 alone
          rf"(?:(?=(?:{_V}*?{_SWITCH}){{4}})|(?={_V}*[a-z])(?={_V}*[A-Z])(?={_V}*\d))"
          rf"{_V}{{8,}}")
EXTRA_PATTERNS.append((
    "keyword-assignment",
    rf"(?i){_NAME}(?:{_GAP}{_SEP}|\s+)(?-i:{_VALUE})",
    "KeywordDetector needs quotes in ad-hoc mode (DB_PASSWORD=x, password: x, 'password is x' are missed)",
))
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


HANGUL_FILLERS = {"\u115f", "\u1160", "\u3164", "\uffa0"}


def unicode_violations(text: str) -> list[str]:
    """Recommended rule; returns U+XXXX of every refused character."""
    return [code for _, code in unicode_violation_positions(text)]


_ASCII_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def unicode_violation_positions(text: str) -> list[tuple[int, str]]:
    """(index, U+XXXX) of every refused character of ``text`` (CRLF counts as LF)."""
    text = text.replace("\r\n", "\n")  # normalise CRLF before the gate; a lone CR is refused
    if text.isascii() and not _ASCII_CONTROL.search(text):
        return []  # the common case, in C: nothing below can fire on plain ASCII
    bad = []
    for i, ch in enumerate(text):
        cp = ord(ch)
        cat = unicodedata.category(ch)
        prev = text[i - 1] if i else ""
        nxt = text[i + 1] if i + 1 < len(text) else ""
        if ch in "\t\n":
            continue
        if cp == 0x200D:  # ZWJ: inside an emoji sequence, or between Arabic/Indic letters
            base = prev
            if base == "\ufe0f" and i >= 2:
                base = text[i - 2]
            emoji_before = base and (_is_pictographic(ord(base)) or 0x1F3FB <= ord(base) <= 0x1F3FF)
            if (emoji_before and nxt and _is_pictographic(ord(nxt))) or (
                    prev and nxt and _joins_script_letters(prev, nxt)):
                continue
            bad.append((i, f"U+{cp:04X}"))
        elif cp == 0x200C:  # ZWNJ: only between Arabic/Indic letters (Persian, Hindi)
            if prev and nxt and _joins_script_letters(prev, nxt):
                continue
            bad.append((i, f"U+{cp:04X}"))
        elif 0xFE00 <= cp <= 0xFE0F:  # one variation selector after a visible base character
            if prev and not (0xFE00 <= ord(prev) <= 0xFE0F) and unicodedata.category(prev)[0] not in "CZ":
                continue
            bad.append((i, f"U+{cp:04X}"))
        elif 0xE0100 <= cp <= 0xE01EF or 0xE0000 <= cp <= 0xE007F:  # VS17-256, tag characters
            bad.append((i, f"U+{cp:04X}"))
        elif cat in ("Cc", "Cf", "Cs", "Zl", "Zp") or ch in HANGUL_FILLERS:
            bad.append((i, f"U+{cp:04X}"))
    return bad


# -- injection: instructions aimed at an agent, fake roles, exfiltration ------------------
#
# Phrases, not words: "ignore the previous build's cache warnings" is a fine
# note, "ignore all previous instructions" is not. Every rule names its kind.

_AGENT = r"(?:you|the agent|agents?|assistant|ai|model|llm|claude|copilot|gpt)"
INJECTION_PATTERNS: list[tuple[str, str]] = [
    ("instruction override",
     r"(?i)\b(?:ignore|disregard|forget|override)\b[^.\n]{0,40}?\b(?:previous|prior|above|earlier|"
     r"all|any|everything)\b[^.\n]{0,30}?\b(?:instructions?|prompts?|rules|directions|you were told|"
     r"guidelines|context|messages?)\b"),
    ("instruction override", r"(?i)\bignore the above\b|\bforget everything\b"),
    ("role reassignment",
     r"(?i)\byou are now\b[^.\n]{0,40}?\b(?:agent|assistant|mode|\w*gpt|bot|ai|without|"
     r"unrestricted|no longer|free to|allowed)\b"),
    ("role reassignment",
     rf"(?i)\b(?:from now on,? {_AGENT}|from now on you|pretend (?:to be|you are)|"
     rf"act as (?:if you were )?(?:the|an?) (?:admin|owner|root|maintainer)|"
     rf"(?:developer|god|jailbreak|dan) mode)\b"),
    ("instruction override",
     r"(?i)\bnew instructions?\s*:|\byour (?:new|real|actual) (?:task|instructions?|goal|orders)\b|"
     r"\bdecode (?:and|then) (?:follow|run|execute|obey)\b"),
    ("fake role or system marker",
     r"<\|(?:im_start|im_end|endoftext|system|user|assistant|eot_id|start_header_id)\|>|"
     r"\[INST\][^\[\n]{10,}\[/INST\]|<</?SYS>>|</?system>|"
     r"</(?:memory|context|instructions?)>\s*</?[a-z]"),
    ("fake role or system marker", r"(?im)^\s*#{1,6}\s*system\s*:"),
    ("fake role or system marker", r"(?m)^\s*(?:SYSTEM|System)\s*:"),
    ("fake role or system marker",
     r"(?ms)^\s*(?:Human|User|Assistant)\s*:\s*\S.*?^\s*(?:Human|User|Assistant)\s*:"),
    ("hidden instruction", r"(?is)<!--.{0,200}?\b(?:agent|assistant|system|override|instruction)\b.{0,200}?-->"),
    ("exfiltration",
     r"(?i)\b(?:cat|print|post|send|upload|include|paste|share|leak|reveal|exfiltrate|show)\b"
     r"[^.\n]{0,60}?(?:\.env\b|~/\.ssh|id_(?:rsa|ed25519)|\.aws/credentials|printenv|"
     r"environment variables|secrets?\b|tokens?\b|credentials|system prompt)"),
    ("exfiltration",
     r"(?i)(?:\.env\b|~/\.ssh|id_(?:rsa|ed25519)|\.aws/credentials|\.netrc)[^.\n]{0,40}?"
     r"\b(?:post|send|upload|paste|share|include|comment|email)\b"),
    ("exfiltration",
     r"(?i)\$\(\s*(?:printenv|env\b|cat\s+[^)]*(?:\.env|\.netrc|\.ssh|credentials|\.aws|id_\w+))|"
     r"\benv\s*\|\s*base64\b"),
    ("remote code", r"(?i)\bcurl\b[^\n|]{0,200}\|\s*(?:ba|z)?sh\b|\bwget\b[^\n|]{0,200}\|\s*(?:ba|z)?sh\b"),
    ("exfiltration", r"(?i)!\[[^\]]*\]\(https?://[^)]*\{[^)]*\}"),
    ("safety bypass",
     r"(?i)\b(?:disable|skip|bypass|turn off)\b[^.\n]{0,40}?\b(?:safety|security|branch protection|"
     r"review|confirmation|the gate|hooks?)\b[^.\n]{0,60}?\b(?:agent|you|always|every|without)\b"),
    ("safety bypass", r"(?i)\b(?:safety|security) (?:checks? |review )?(?:are|is) (?:disabled|off|not needed)"),
    ("safety bypass", r"(?i)GIT_MEM_GATE\s*=\s*off|--no-verify on every"),
    ("concealment", r"(?i)\b(?:do not|don't|never) (?:tell|mention|show|inform)\b[^.\n]{0,30}?\b(?:the )?user\b"),
    ("concealment", r"(?i)\bquietly\b[^.\n]{0,40}?\b(?:replace|delete|remove|change|add)\b"),
    ("self-propagation", r"(?i)\bcopy this (?:exact )?(?:note|memory|text)\b[^.\n]{0,40}?\b(?:every|all|each)\b"),
]
INJECTION_COMPILED = [(kind, re.compile(rx)) for kind, rx in INJECTION_PATTERNS]


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


def scan_injection(text: str) -> list[Finding]:
    out = []
    for kind, rx in INJECTION_COMPILED:
        m = rx.search(text)
        if m:
            line, col = _line_col(text, m.start())
            out.append(Finding("injection", kind, line, col))
    return out


# Bump when any rule here changes: cached verdicts of older versions are redone.
GATE_VERSION = 1


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
        # `# pragma: allowlist secret` in a memory must not switch the gate off, and
        # is_likely_id_string drops findings on any line with "_id" before the value.
        filters = [
            f for f in sorted(set(Settings().filters) - Settings.DEFAULT_FILTERS)
            if f not in ("detect_secrets.filters.allowlist.is_line_allowlisted",
                         "detect_secrets.filters.heuristic.is_likely_id_string")
        ]
        config = {"plugins_used": [{"name": n} for n in plugins if n not in drop],
                  "filters_used": [{"path": p} for p in filters]}
        # Configured once for the process (git mem owns detect-secrets' global
        # settings here; re-entering transient settings per text costs ~0.3 ms).
        cache_bust()
        configure_settings_from_baseline(config)
        _DS.update(scan_line=scan_line, config=config)
    return _DS


# Every detect-secrets plugin in use looks for a keyword or a long token-like
# run; a line with neither cannot produce a finding, so it skips the scanner
# (~170 us a line) entirely. The extra patterns always run.
_MAYBE_SECRET = re.compile(
    r"(?i)\b(?=[A-Za-z+/_=\-]*\d)[A-Za-z0-9+/_=\-]{16,}|pass|secret|token|key|auth|pwd|\bpw\b|"
    r"cred|://|-----BEGIN|@|-p\S|bearer|xox|eyJ")


def scan_secrets(text: str) -> list[tuple[Finding, tuple[int, int] | None]]:
    """Secret findings, each with the (start, end) span of the value when known."""
    for value in DOCUMENTED_EXAMPLES:  # blanked with spaces: offsets stay true
        text = text.replace(value, " " * len(value))
    out: list[tuple[Finding, tuple[int, int] | None]] = []
    if not _MAYBE_SECRET.search(text):
        return out  # no keyword, no long token: neither scanner can fire
    out += _scan_with_detect_secrets(text)
    for name, rx, _ in EXTRA_COMPILED:
        for m in rx.finditer(text):
            line, col = _line_col(text, m.start())
            out.append((Finding("secret", name, line, col), (m.start(), m.end())))
    return out


def _scan_with_detect_secrets(text: str) -> list[tuple[Finding, tuple[int, int] | None]]:
    ds = _detect_secrets()
    out: list[tuple[Finding, tuple[int, int] | None]] = []
    offset = 0
    for n, line in enumerate(text.split("\n"), start=1):
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


def redact(text: str) -> tuple[str, int]:
    """``text`` with every detected secret masked, and how many were masked.

    A secret whose exact span is unknown masks its whole line.
    """
    spans: list[tuple[int, int]] = []
    lines = text.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    for finding, span in scan_secrets(text):
        if span is None:
            start = starts[finding.line - 1]
            span = (start, start + len(lines[finding.line - 1]))
        spans.append(span)
    out = text
    for start, end in sorted(set(spans), reverse=True):
        out = out[:start] + "[REDACTED]" + out[end:]
    return out, len(spans)

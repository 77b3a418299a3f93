#!/usr/bin/env python3
"""Measure detect-secrets against the write-gate fixtures in fixtures/gate/.

Installs nothing. detect-secrets must be importable, e.g.:

    python3 -m venv /tmp/gate-venv && /tmp/gate-venv/bin/pip install detect-secrets
    /tmp/gate-venv/bin/python scripts/gate_study.py            # full report
    /tmp/gate-venv/bin/python scripts/gate_study.py --brief    # tables only

What it does, through detect-secrets' Python API (not the CLI):

* scans every physical line of every fixture text with ``detect_secrets.core.scan.scan_line``
  inside ``detect_secrets.settings.transient_settings`` for several configurations;
* re-applies the entropy limit to findings of the two high-entropy plugins, exactly as
  ``detect-secrets scan --string`` does when it prints them: in ad-hoc mode ``scan_line`` runs
  those plugins with ``enable_eager_search=True``, and when a line has no quoted string the
  eager path returns *every* base64/hex-charset word unfiltered (see the "raw" row);
* reports detection on secrets.jsonl, false positives on benign.jsonl, which plugin fired,
  the kinds detect-secrets misses entirely, import time and per-line cost;
* measures a recommended gate (d): the default plugins minus the two entropy plugins and
  IPPublicDetector, the default filters minus `is_line_allowlisted` (a `pragma: allowlist secret`
  in the text would switch the scan off) and `is_likely_id_string` (any "_id" earlier on the line
  hides a keyword finding), plus EXTRA_PATTERNS, an exact-value allowlist of documented example
  keys and a placeholder filter on KeywordDetector values;
* checks all fixtures against a reference implementation of the recommended Unicode rule;
* --also-scan FILE...: runs the recommended gate over other text (docs, commit messages).
"""
from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import time
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "gate"

try:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import Settings, get_plugins, transient_settings
except ImportError:  # pragma: no cover - environment problem, not a result
    sys.exit(
        "error: detect-secrets is not importable; hint: python3 -m venv /tmp/gate-venv && "
        "/tmp/gate-venv/bin/pip install detect-secrets, then run this script with "
        "/tmp/gate-venv/bin/python"
    )


# --------------------------------------------------------------------------------------------
# Fixtures
# --------------------------------------------------------------------------------------------

def load(name: str, fixtures: Path) -> list[dict]:
    rows = []
    with open(fixtures / name, encoding="utf-8") as fh:
        for n, raw in enumerate(fh, 1):
            row = json.loads(raw)
            assert isinstance(row.get("text"), str) and row["text"], f"{name}:{n}: text"
            assert isinstance(row.get("kind"), str) and row["kind"], f"{name}:{n}: kind"
            row["_where"] = f"{name}:{n}"
            rows.append(row)
    return rows


def lines_of(text: str) -> list[str]:
    # The gate sees one memory text; detect-secrets is line based, so scan each physical line.
    return text.splitlines() or [text]


# --------------------------------------------------------------------------------------------
# detect-secrets configurations
# --------------------------------------------------------------------------------------------

ALL_PLUGINS = sorted(cls.__name__ for cls in get_mapping_from_secret_type_to_class().values())
ENTROPY = ("Base64HighEntropyString", "HexHighEntropyString")
DEFAULT_FILTERS = sorted(set(Settings().filters) - Settings.DEFAULT_FILTERS)
# `# pragma: allowlist secret` in the text would switch detection off: a gate must not honour it.
# `is_likely_id_string` drops keyword findings on any line with "_id" before the value.
GATE_FILTERS = [
    f for f in DEFAULT_FILTERS
    if f not in ("detect_secrets.filters.allowlist.is_line_allowlisted",
                 "detect_secrets.filters.heuristic.is_likely_id_string")
]


def ds_config(drop=(), limits=None, filters=None) -> dict:
    limits = limits or {}
    cfg = {"plugins_used": [
        {"name": n, **({"limit": limits[n]} if n in limits else {})}
        for n in ALL_PLUGINS if n not in drop
    ]}
    if filters is not None:
        cfg["filters_used"] = [{"path": p} for p in filters]
    return cfg


# --------------------------------------------------------------------------------------------
# Recommended additions on top of detect-secrets (only for formats it has no plugin for,
# plus three generic rules for shapes its plugins get wrong in free text)
# --------------------------------------------------------------------------------------------

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
EXTRA_COMPILED = [(name, re.compile(rx), why) for name, rx, why in EXTRA_PATTERNS]

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


# --------------------------------------------------------------------------------------------
# Scanning
# --------------------------------------------------------------------------------------------

def ds_findings(line: str, plugins_by_type: dict, recheck_entropy: bool = True) -> list[tuple[str, str]]:
    out = []
    for secret in scan_line(line):
        plugin = plugins_by_type[secret.type]
        value = secret.secret_value or ""
        if recheck_entropy and hasattr(plugin, "entropy_limit"):
            if not plugin.calculate_shannon_entropy(value) > plugin.entropy_limit:
                continue
        out.append((type(plugin).__name__, value))
    return out


class Run:
    """One configuration applied to one corpus."""

    def __init__(self):
        self.hits: dict[str, list[tuple[str, str]]] = {}
        self.line_times: list[float] = []


def run_config(cfg: dict, rows: list[dict], *, recheck_entropy=True, extras=False,
               allowlist=False, placeholder_filter=False) -> Run:
    run = Run()
    with transient_settings(cfg):
        plugins_by_type = {p.secret_type: p for p in get_plugins()}
        list(scan_line("warm up"))  # plugin initialisation is not a per-line cost
        for row in rows:
            text = row["text"]
            if allowlist:
                for value in DOCUMENTED_EXAMPLES:
                    text = text.replace(value, "<documented-example>")
            found = []
            for line in lines_of(text):
                t0 = time.perf_counter()
                hits = ds_findings(line, plugins_by_type, recheck_entropy)
                if placeholder_filter:
                    hits = [(p, v) for p, v in hits
                            if not (p == "KeywordDetector" and PLACEHOLDER_VALUE.match(v))]
                run.line_times.append(time.perf_counter() - t0)
                found += hits
            if extras:
                t0 = time.perf_counter()
                for name, rx, _ in EXTRA_COMPILED:
                    m = rx.search(text)
                    if m:
                        found.append((f"extra:{name}", m.group(0)))
                run.line_times[-1] += time.perf_counter() - t0
            run.hits[row["_where"]] = found
    return run


# --------------------------------------------------------------------------------------------
# Unicode reference rule (what the fixtures are labelled against)
# --------------------------------------------------------------------------------------------

def _is_pictographic(cp: int) -> bool:
    # Approximation of Extended_Pictographic; a gate should use a real table
    # (e.g. the third-party `regex` module's \p{Extended_Pictographic}).
    return (0x1F000 <= cp <= 0x1FAFF or 0x2600 <= cp <= 0x27BF or 0x2300 <= cp <= 0x23FF
            or 0x2B00 <= cp <= 0x2BFF or 0x2194 <= cp <= 0x21AA
            or cp in (0xA9, 0xAE, 0x203C, 0x2049, 0x2122, 0x2139, 0x3030, 0x303D, 0x3297, 0x3299))


def _joins_script_letters(prev: str, nxt: str) -> bool:
    def ok(ch):
        cp = ord(ch)
        script = (0x0600 <= cp <= 0x06FF or 0x0750 <= cp <= 0x077F or 0x08A0 <= cp <= 0x08FF
                  or 0xFB50 <= cp <= 0xFDFF or 0xFE70 <= cp <= 0xFEFF  # Arabic (Persian, Urdu)
                  or 0x0900 <= cp <= 0x0DFF)                         # Indic scripts
        return script and unicodedata.category(ch)[0] in "LM"
    return ok(prev) and ok(nxt)


HANGUL_FILLERS = {"\u115f", "\u1160", "\u3164", "\uffa0"}


def unicode_violations(text: str) -> list[str]:
    """Recommended rule; returns U+XXXX of every refused character."""
    text = text.replace("\r\n", "\n")  # normalise CRLF before the gate; a lone CR is refused
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
            bad.append(f"U+{cp:04X}")
        elif cp == 0x200C:  # ZWNJ: only between Arabic/Indic letters (Persian, Hindi)
            if prev and nxt and _joins_script_letters(prev, nxt):
                continue
            bad.append(f"U+{cp:04X}")
        elif 0xFE00 <= cp <= 0xFE0F:  # one variation selector after a visible base character
            if prev and not (0xFE00 <= ord(prev) <= 0xFE0F) and unicodedata.category(prev)[0] not in "CZ":
                continue
            bad.append(f"U+{cp:04X}")
        elif 0xE0100 <= cp <= 0xE01EF or 0xE0000 <= cp <= 0xE007F:  # VS17-256, tag characters
            bad.append(f"U+{cp:04X}")
        elif cat in ("Cc", "Cf", "Cs", "Zl", "Zp") or ch in HANGUL_FILLERS:
            bad.append(f"U+{cp:04X}")
    return bad


# --------------------------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------------------------

def short(text: str, n: int = 90) -> str:
    text = text.replace("\n", "\\n")
    return text if len(text) <= n else text[: n - 1] + "…"


def pct(a: int, b: int) -> str:
    return f"{a}/{b} ({100.0 * a / b:.1f}%)" if b else "0/0"


def import_cost(repeats: int = 5) -> tuple[float, float, list[str]]:
    code = (
        "import time; t0 = time.perf_counter()\n"
        "from detect_secrets.core.scan import scan_line\n"
        "from detect_secrets.settings import default_settings\n"
        "t1 = time.perf_counter()\n"
        "with default_settings():\n"
        "    list(scan_line('warm up'))\n"
        "t2 = time.perf_counter()\n"
        "print(t1 - t0, t2 - t1)\n"
    )
    imports, inits = [], []
    for _ in range(repeats):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        a, b = out.stdout.split()
        imports.append(float(a))
        inits.append(float(b))
    # where the time goes, from -X importtime (cumulative microseconds, inflated by the tracing)
    res = subprocess.run([sys.executable, "-X", "importtime", "-c", "import detect_secrets.core.scan"],
                         capture_output=True, text=True, check=True)
    cumulative: dict[str, int] = {}
    for ln in res.stderr.splitlines():
        m = re.match(r"import time:\s+\d+\s+\|\s+(\d+)\s+\|\s*(\S+)", ln)
        if m:
            cumulative[m.group(2)] = max(cumulative.get(m.group(2), 0), int(m.group(1)))
    total = max(cumulative.values())
    biggest = [f"{name} {cumulative[name] / 1000:.0f} ms of {total / 1000:.0f} ms"
               for name in ("requests", "multiprocessing", "yaml", "unidiff") if name in cumulative]
    return statistics.median(imports), statistics.median(inits), biggest


def summarise(label, run_s, run_b, secrets, benign, out, brief):
    hit_s = [r for r in secrets if run_s.hits[r["_where"]]]
    missed = [r for r in secrets if not run_s.hits[r["_where"]]]
    fps = [r for r in benign if run_b.hits[r["_where"]]]
    fps_nodoc = [r for r in fps if r["kind"] != "documented-example"]
    times = run_s.line_times + run_b.line_times
    row = {
        "label": label,
        "detected": pct(len(hit_s), len(secrets)),
        "fp": pct(len(fps), len(benign)),
        "fp_nodoc": pct(len(fps_nodoc), len(benign) - sum(r["kind"] == "documented-example" for r in benign)),
        "us_mean": 1e6 * statistics.mean(times),
        "us_p95": 1e6 * sorted(times)[int(0.95 * (len(times) - 1))],
    }
    if not brief:
        out.append(f"\n### {label}\n")
        out.append(f"detected {row['detected']}, false positives {row['fp']}")
        if missed:
            out.append("\nmissed secrets (kind: text):")
            for r in missed:
                out.append(f"  - {r['kind']}: {short(r['text'])}")
        if fps:
            out.append("\nfalse positives (kind [plugin: value]: text):")
            for r in fps:
                fired = sorted({f"{p}: {short(v, 28)}" for p, v in run_b.hits[r["_where"]]})
                out.append(f"  - {r['kind']} [{'; '.join(fired)}]: {short(r['text'], 70)}")
        by_plugin: dict[str, int] = {}
        for r in fps:
            for p in {p for p, _ in run_b.hits[r["_where"]]}:
                by_plugin[p] = by_plugin.get(p, 0) + 1
        if by_plugin:
            out.append("\nbenign lines refused, per plugin: " + ", ".join(
                f"{p} {n}" for p, n in sorted(by_plugin.items(), key=lambda kv: -kv[1])))
    return row, missed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fixtures", type=Path, default=FIXTURES)
    ap.add_argument("--brief", action="store_true", help="tables only, no per-line listings")
    ap.add_argument("--also-scan", nargs="*", type=Path, default=[], metavar="FILE",
                    help="also run the recommended gate over every line of these text files "
                         "(held-out prose: docs, commit messages) and list what it would refuse")
    args = ap.parse_args()

    secrets = load("secrets.jsonl", args.fixtures)
    benign = load("benign.jsonl", args.fixtures)
    inj = load("injection.jsonl", args.fixtures)
    inj_ok = load("injection_benign.jsonl", args.fixtures)
    uni = load("unicode.jsonl", args.fixtures)
    uni_ok = load("unicode_benign.jsonl", args.fixtures)

    import detect_secrets.__version__ as dsv
    out: list[str] = []
    out.append(f"# detect-secrets {dsv.VERSION} against {args.fixtures.relative_to(ROOT) if args.fixtures.is_relative_to(ROOT) else args.fixtures}")
    out.append(f"secrets.jsonl {len(secrets)} lines / {len({r['kind'] for r in secrets})} kinds; "
               f"benign.jsonl {len(benign)} lines / {len({r['kind'] for r in benign})} kinds; "
               f"injection {len(inj)}+{len(inj_ok)}; unicode {len(uni)}+{len(uni_ok)}")
    out.append(f"default plugins ({len(ALL_PLUGINS)}): {', '.join(ALL_PLUGINS)}")

    configs = [
        ("(a) default", ds_config(), {}),
        ("(b) default minus entropy plugins", ds_config(drop=ENTROPY), {}),
        ("(c) entropy limits raised (Base64 5.0, Hex 3.5)",
         ds_config(limits={"Base64HighEntropyString": 5.0, "HexHighEntropyString": 3.5}), {}),
        ("(d) RECOMMENDED: (b) minus IPPublic, gate filters, + extra patterns + documented-example allowlist",
         ds_config(drop=ENTROPY + ("IPPublicDetector",), filters=GATE_FILTERS),
         dict(extras=True, allowlist=True, placeholder_filter=True)),
        ("(e) (d) plus Base64HighEntropyString at 5.0",
         ds_config(drop=("HexHighEntropyString", "IPPublicDetector"),
                   limits={"Base64HighEntropyString": 5.0}, filters=GATE_FILTERS),
         dict(extras=True, allowlist=True, placeholder_filter=True)),
    ]

    rows = []
    # the raw ad-hoc behaviour, once, to show why the entropy re-check is needed
    raw_b = run_config(ds_config(), benign, recheck_entropy=False)
    raw_fp = sum(bool(v) for v in raw_b.hits.values())
    runs = {}
    for label, cfg, opts in configs:
        run_s = run_config(cfg, secrets, **opts)
        run_b = run_config(cfg, benign, **opts)
        runs[label] = (run_s, run_b)
        row, missed = summarise(label, run_s, run_b, secrets, benign, out, args.brief)
        rows.append(row)

    out.append("\n## Summary (a memory text is refused if any finding remains)\n")
    out.append("| configuration | secrets refused | benign refused | benign refused excl. documented-example | mean µs/line | p95 µs/line |")
    out.append("| --- | --- | --- | --- | --- | --- |")
    for r in rows:
        out.append(f"| {r['label']} | {r['detected']} | {r['fp']} | {r['fp_nodoc']} | {r['us_mean']:.0f} | {r['us_p95']:.0f} |")
    out.append(f"\nraw `scan_line` with default settings and no entropy re-check: benign refused "
               f"{pct(raw_fp, len(benign))} (every unquoted word is yielded by the entropy plugins)")

    # which kinds detect-secrets has nothing for: missed by (a) default (even with entropy)
    a_s = runs[configs[0][0]][0]
    b_s = runs[configs[1][0]][0]
    none_at_all = [r["kind"] for r in secrets if not a_s.hits[r["_where"]]]
    entropy_only = [r["kind"] for r in secrets if a_s.hits[r["_where"]] and not b_s.hits[r["_where"]]]
    out.append(f"\nkinds no default plugin catches, entropy included ({len(none_at_all)}): {', '.join(none_at_all)}")
    out.append(f"\nkinds caught only by the entropy plugins, i.e. no dedicated plugin ({len(entropy_only)}): "
               f"{', '.join(entropy_only)}")

    # what each extra pattern contributes on the secrets no detect-secrets plugin caught
    d_s = runs[configs[3][0]][0]
    sole: dict[str, list[str]] = {}
    shared: dict[str, list[str]] = {}
    for r in secrets:
        sources = {p for p, _ in d_s.hits[r["_where"]]}
        if not sources or not all(s.startswith("extra:") for s in sources):
            continue
        target = sole if len(sources) == 1 else shared
        for s in sources:
            target.setdefault(s[6:], []).append(r["kind"])
    out.append("\n## Extra patterns (recommended gate)\n")
    out.append("Per pattern: regex, reason, the secret kinds where it is the only detector, and the kinds "
               "where it fires together with other extra patterns (no detect-secrets plugin involved).\n")
    for name, rx, why in EXTRA_PATTERNS:
        out.append(f"- {name}: `{rx}`\n  reason: {why}\n  only detector for: {', '.join(sole.get(name, [])) or '-'}"
                   f"\n  also fires on: {', '.join(shared.get(name, [])) or '-'}")

    # other accept corpora must not trip the recommended secret scan either
    label_d, cfg_d, opts_d = configs[3]
    out.append("\n## Recommended secret scan on the other corpora (injection/unicode, accept sets)\n")
    for name, rows_ in (("injection_benign.jsonl", inj_ok), ("unicode_benign.jsonl", uni_ok)):
        run = run_config(cfg_d, rows_, **opts_d)
        bad = [r for r in rows_ if run.hits[r["_where"]]]
        out.append(f"- {name}: refused {pct(len(bad), len(rows_))}"
                   + "".join(f"\n  - {r['kind']} {run.hits[r['_where']]}: {short(r['text'])}" for r in bad))

    # unicode reference rule
    out.append("\n## Unicode reference rule against the fixtures\n")
    for name, rows_, expect in (("unicode.jsonl", uni, True), ("unicode_benign.jsonl", uni_ok, False),
                                ("secrets.jsonl", secrets, False), ("benign.jsonl", benign, False),
                                ("injection.jsonl", inj, False), ("injection_benign.jsonl", inj_ok, False)):
        wrong = [r for r in rows_ if bool(unicode_violations(r["text"])) != expect]
        verb = "refused" if expect else "accepted"
        out.append(f"- {name}: {verb} {pct(len(rows_) - len(wrong), len(rows_))}"
                   + "".join(f"\n  - {r['kind']} {unicode_violations(r['text'])}: {short(r['text'])}" for r in wrong))

    if args.also_scan:
        held = []
        for path in args.also_scan:
            for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
                if line.strip():
                    held.append({"text": line, "kind": "held-out", "_where": f"{path}:{n}"})
        run = run_config(cfg_d, held, **opts_d)
        bad = [r for r in held if run.hits[r["_where"]]]
        out.append("\n## Recommended gate on held-out text (--also-scan)\n")
        out.append(f"refused {pct(len(bad), len(held))} non-empty lines"
                   + "".join(f"\n  - {r['_where']} {sorted({p for p, _ in run.hits[r['_where']]})}: {short(r['text'])}"
                             for r in bad))

    imp, init, biggest = import_cost()
    out.append("\n## Cost\n")
    out.append(f"- import detect_secrets.core.scan + settings (fresh interpreter, median of 5): {imp * 1000:.0f} ms")
    out.append(f"- first scan_line under default_settings (plugin init): {init * 1000:.0f} ms")
    out.append(f"- under -X importtime: {'; '.join(biggest)} (requests is only used by the optional `verify` feature)")
    out.append(f"- per line: see the µs/line columns (warm, this machine, {len(secrets) + len(benign)} texts)")

    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())

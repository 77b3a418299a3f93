"""detect-secrets: its plugins configured for the gate, and run only where one can match.

detect-secrets costs ~120 ms to import, so it is imported only here and only for
a text with a keyword in an assignment or a long token that one of its plugins'
own patterns (recorded in gate/factors.py) matches. Its keyword and Basic Auth
findings are dropped for placeholders, variable names, references and words.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from typing import Any

from . import prefilter, programs
from .finding import Finding
from .judges import NAMES_A_DIGEST, _words_only, looks_like_a_digest
from .lazyre import lazy

# KeywordDetector (quoted form) also fires on obvious placeholders.
PLACEHOLDER_VALUE = lazy(
    r"(?i)^(?:your[_-]?\w*|\w*[_-]here|replace[_-]?me|change[_-]?me|x{3,}|\*+|todo|tbd|"
    r"example|dummy|redacted|none|null|wrong|invalid|incorrect|bad|fake|mock|sample|placeholder)$")

# A secret manager's path (prod/payments/db) names a secret, it is not one.
_REF_PATH = lazy(r"^[a-z][a-z0-9_.-]*(?:/[a-z0-9_.-]+)+$")

# Where a secret manager keeps it (vault:kv/prod/api, op://Vault/item/field, an ARN of
# Secrets Manager or SSM, a Secret Manager resource name): a reference, not the secret.
# (Its shape, not only its prefix: "vault:Hunter2xQ9!mZ" or "env:Kx92..." is a password.)
_SECRET_REFERENCE = lazy(r"(?:op://[^/\s\"']+/[^/\n\"']+/[^\n\"']+|vault:(?:op://[^\n\"']+|[\w.-]+(?:/[\w. -]+)+)"
                         r"|env:[A-Z_][A-Z0-9_]*|ssm:/[\w./-]+|(?:awssm|gcpsm|azkv|akv|sm|doppler|infisical|bws"
                         r"|sops|keychain|secretsmanager)://?[\w.-]+/[\w./ -]+)$|arn:aws:(?:secretsmanager|ssm):"
                         r"|projects/[\w-]+/secrets/[\w-]+$")

# A password written in capitals is a placeholder (USER:PASSWORD@HOST).
_CAPS_WORD = lazy(r"[A-Z][A-Z_]*|(?i:password|passwd|pass|pwd|secret|changeme)")

# ...and on the name of the environment variable that holds the secret (password_env = "DB_PASSWORD").
ENV_VAR_NAME = lazy(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")


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
        list(scan_line(""))  # (its once-only settings: filters for ad-hoc strings)
        _DS.update(scan_line=_plugins_scan_line(scan_line), config=config)
    return _DS


def _plugins_scan_line(scan_line: Any) -> Any:
    """detect-secrets' ``scan_line(line)``, as ``scan(line, names)`` running only the plugins
    ``names`` (None: all) in the order it runs them, when its version is the one
    gate/factors.py recorded (its internals are known): a plugin whose own patterns do
    not match the line finds nothing in it (_plugin_names_for). It also leaves out what
    scan_line redoes for every line: clearing its cache of filters (the same filters
    every time: git mem configures detect-secrets once).
    A key block of 256 lines: ~100 -> ~25 us a line. Any other version: scan_line."""
    from . import _scanner_version
    from .factors import DETECT_SECRETS

    def every(line: str, names: frozenset[str] | None) -> Any:
        return scan_line(line)

    if DETECT_SECRETS["version"] != _scanner_version():
        return every
    try:
        from detect_secrets.core.plugins import initialize
        from detect_secrets.core.scan import _is_filtered_out, _scan_line
        from detect_secrets.util.code_snippet import get_code_snippet
        from detect_secrets.settings import get_settings
    except ImportError:
        return every
    classnames = list(get_settings().plugins)

    def scan(line: str, names: frozenset[str] | None) -> Any:
        context = get_code_snippet(lines=[line], line_number=1)
        for classname in classnames:
            if names is not None and classname not in names:
                continue
            plugin: Any = initialize.from_plugin_classname(classname)  # (fresh, as scan_line starts them)
            for secret in _scan_line(plugin=plugin, filename="adhoc-string-scan", line=line, line_number=0,
                                     enable_eager_search=True, context=context):
                if not _is_filtered_out(required_filter_parameters=["context"], filename=secret.filename,
                                        secret=secret.secret_value, plugin=plugin, line=line, context=context):
                    yield secret

    return scan


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
    # Every match of _MAYBE_DS holds ":", "=" or "BEGIN": looked for first, they clear
    # most lines at once (the pattern tries a keyword at every position, ~5 us a line).
    marked = ":" in text or "=" in text or "BEGIN" in text
    if not (marked and _MAYBE_DS.search(text)) and not any(
            any(c.isdigit() for c in m.group()) for m in _LONG_TOKEN.finditer(text)):
        return False
    shapes = _plugin_shapes()
    if shapes is None:
        return True
    return any(_plugin_rule(i).search(text) for i in shapes.indices(text))


def _plugin_names_for(line: str) -> frozenset[str] | None:
    """The detect-secrets plugins one of whose own patterns matches ``line`` (None: not
    known for this version, run them all)."""
    shapes = _plugin_shapes()
    if shapes is None:
        return None
    from .factors import DETECT_SECRETS

    names = DETECT_SECRETS["plugins"]
    return frozenset(names[i] for i in shapes.indices(line) if _plugin_rule(i).search(line))


@functools.cache
def _plugin_rule(i: int) -> re.Pattern[str]:
    from .factors import DETECT_SECRETS

    pattern, flags = DETECT_SECRETS["patterns"][i]
    return programs.compile(pattern, flags)


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


# A command that prints or fetches a secret (the value of password_command = "...", or one
# in backticks after "secret:"), not a secret itself.
_A_COMMAND = lazy(r"(?:openssl|pass|op|vault|gpg|security|secret-tool|keyring|aws|gcloud|az|kubectl|cat"
                  r"|python3?|head|pwgen|bw|lpass|sops|age|echo|printf)\s")
# A keyword plugin fires on "key: <value>"; a line that calls it a public key says it is not
# a secret (an age or WireGuard public key, a VAPID public key).
_PUBLIC_KEY_BEFORE = lazy(r"(?i)\bpublic[ _-]?key\b[\"']?\s*[:=]?\s*[\"']?$")


def _scan_with_detect_secrets(text: str) -> Iterator[tuple[Finding, tuple[int, int] | None]]:
    """detect-secrets' findings in ``text``, line by line (a caller that has enough
    stops reading)."""
    ds = _detect_secrets()
    offset = 0
    for n, line in enumerate(text.split("\n"), start=1):
        if _needs_detect_secrets(line):
            for secret in ds["scan_line"](line, _plugin_names_for(line)):
                value = secret.secret_value or ""
                if secret.type == "Secret Keyword" and (PLACEHOLDER_VALUE.match(value)
                                                        or ENV_VAR_NAME.match(value)
                                                        or _REF_PATH.match(value)
                                                        or _SECRET_REFERENCE.match(value)
                                                        or _words_only(value)):
                    continue
                if secret.type == "Basic Auth Credentials" and (
                        _CAPS_WORD.fullmatch(value) or f"//{value}:{value}@" in line
                        or _words_only(value)):
                    continue  # postgresql://USER:PASSWORD@HOST as documentation writes it; a
                    # password that repeats the user (postgres:postgres@) is a well-known default
                col = line.find(value) + 1 if value and value in line else 0
                if col and secret.type in ("Secret Keyword", "IBM Cloud IAM Key") and _PUBLIC_KEY_BEFORE.search(
                        line, 0, col - 1):
                    continue
                if secret.type == "Secret Keyword" and (
                        _A_COMMAND.match(value.lstrip("`")) and (value.startswith("`") or (
                            col >= 2 and line[col - 2] == "`"))  # "a strong secret: `openssl
                        # rand -base64 32`": a command in backticks (not `hunter22`)
                        or (col and NAMES_A_DIGEST.search(line, max(0, col - 60), col - 1)
                            and (looks_like_a_digest(value) or _A_COMMAND.match(value)))):
                    continue  # "hashed_secret": <sha1>, password_command = "pass show ...": not the secret
                span = None
                if col:
                    # Plugins with capture groups report only a prefix ("ghp"): mask the
                    # whole token the value starts, up to white space or a quote.
                    start, end = col - 1, col - 1 + len(value)
                    while end < len(line) and not line[end].isspace() and line[end] not in "\"'`":
                        end += 1
                    span = (offset + start, offset + end)
                yield Finding("secret", secret.type, n, col), span
        offset += len(line) + 1


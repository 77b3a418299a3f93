"""The gate's literal prefilter skips a rule only when the rule cannot match."""

from __future__ import annotations

import json
import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from gitmem.gate import prefilter
from gitmem.gate.injection import INJECTION_PATTERNS
from gitmem.gate.secret_rules import EXTRA_PATTERNS

FIGURES = Path(__file__).resolve().parent.parent / "fixtures" / "gate" / "figures"
RULES = [rx for _, rx, _ in EXTRA_PATTERNS] + [rx for _, rx in INJECTION_PATTERNS]
COMPILED = [re.compile(rx) for rx in RULES]
PRESENT = prefilter.Present([prefilter.required(rx) for rx in RULES], [prefilter.also_required(rx) for rx in RULES])


def _corpus() -> list[str]:
    texts = []
    for path in sorted(FIGURES.glob("*.jsonl")):
        if path.name.startswith("invisible"):
            continue
        texts += [json.loads(line)["text"] for line in path.read_text("utf-8").splitlines() if line]
    return texts


def _skips_only_what_cannot_match(text: str) -> None:
    for rx, may in zip(COMPILED, PRESENT.runnable(text)):
        if not may:
            assert rx.search(text) is None, (rx.pattern, text)


def test_skipped_rules_never_match_any_corpus_text() -> None:
    texts = _corpus()
    assert len(texts) > 400
    skipped = 0
    for text in texts:
        _skips_only_what_cannot_match(text)
        skipped += PRESENT.runnable(text).count(False)
    assert skipped > len(texts) * len(RULES) // 2  # and it does skip most of them


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("aAkKsS:=/-_. pwdtokenPASSWORDghp_xoxb0123456789\n'\"")),
               max_size=80))
def test_skipped_rules_never_match_generated_text(text: str) -> None:
    _skips_only_what_cannot_match(text)
    from gitmem.gate import secrets

    if not secrets._NEEDS["keyword-assignment"].search(text):
        assert not secrets._rule([n for n, _, _ in EXTRA_PATTERNS].index("keyword-assignment")).search(text)


def test_factors_of_hand_made_patterns() -> None:
    assert prefilter.required(r"(?i)\bsshpass\s+-p") == frozenset({"sshpass"})
    assert prefilter.required(r"ghp_[A-Za-z0-9]{36}|xoxb-[0-9]+") == {"ghp_", "xoxb-"}
    assert prefilter.required(r"(?:token)?[0-9a-f]{40}") is None  # optional: nothing required
    assert prefilter.required(r"a|[b-z]") is None  # one branch needs no literal
    assert prefilter.required(r"a|[bc]") == {"a", "b", "c"}  # a class of literals is a choice of them
    assert prefilter.required(r"(?i)has(?:ł|l)o\w*") == {"hasło", "haslo"}  # not "has": English has it
    assert prefilter.required(r"(?:xoxb-){1,3}\d+") == {"xoxb-"}
    assert prefilter.required(r"(?i)(?:pass(?:word)?|pwd|pw)=") == {"pass", "pwd", "pw"}  # not "p"
    assert prefilter.required(r"(?:wifi|wi-fi|wlan)") == {"wifi", "wi-fi", "wlan"}
    assert prefilter.required("(?i)\u017fecret") is None  # long s matches "s" when ignoring case
    runnable = prefilter.Present([prefilter.required("K")]).runnable
    assert runnable("\u212a") == [True]  # the Kelvin sign matches K under IGNORECASE


def test_a_rule_needs_every_literal_set_it_passes_through() -> None:
    also = prefilter.also_required
    assert also(r"(?i:\b(?:u|user)\s*[:=]\s*\S+\s+(?:p|pw)\s*=)") == [
        frozenset({":", "="}), frozenset({"p"}), frozenset({"="})]  # (re hoists p(?:w)? out of p|pw)
    assert also(r"ab(?:c|d)?e") == [frozenset({"e"})]  # an optional part needs nothing
    assert also(r"x|y") == []  # each branch alone: nothing every match needs besides
    present = prefilter.Present([prefilter.required("user=.*pass")], [also("user=.*pass")])
    assert present.indices("user=bob") == [] and present.indices("user=bob pass") == [0]


def test_a_value_shape_skips_keyword_assignment_only_where_it_cannot_match() -> None:
    from gitmem.gate import secrets

    needs = secrets._NEEDS["keyword-assignment"]
    rule = re.compile(next(rx for name, rx, _ in EXTRA_PATTERNS if name == "keyword-assignment"))
    texts = _corpus() + ["token: abcdefgh", "token: abcdefg1", "token: Ab1" * 3, "password=x9"]
    skipped = [t for t in texts if not needs.search(t)]
    assert len(skipped) > len(texts) // 6
    assert [t for t in skipped if rule.search(t)] == []
    assert needs.search("token: abcdefg1") and not needs.search("token: abcdefgh a1 B")


def test_the_stored_factor_table_is_current() -> None:
    """gitmem/gate/factors.py spares a one-shot process the parse; it must match the rules."""
    import subprocess
    import sys

    script = Path(__file__).resolve().parent.parent / "scripts" / "gen_gate_factors.py"
    proc = subprocess.run([sys.executable, str(script), "--check"], capture_output=True,
                          text=True, check=False)
    assert proc.returncode == 0, proc.stderr
    from gitmem.gate.factors import SECRETS

    assert prefilter.factors_for([rx for _, rx, _ in EXTRA_PATTERNS], SECRETS) == [
        prefilter.required(rx) for _, rx, _ in EXTRA_PATTERNS]
    stale = {"digest": "0" * 16, "factors": []}
    assert prefilter.factors_for(RULES[:3], stale) == [prefilter.required(r) for r in RULES[:3]]


# -- detect-secrets runs only where one of its token plugins could match ----------------

LONG_DIGIT_TOKENS = ["see docs/v2/architecture2024.md for the layout",
                     "the base image is postgres-15.2.1-alpine3.19",
                     "branch fix/QUAY-1234-rounding is merged",
                     "run tests/unit/test_parser_v3.py first"]


def test_the_scanner_is_skipped_only_where_none_of_its_plugins_can_match(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Every corpus text (secrets, notes, injections, dev and hold-out, and the coding
    memories) gets the same findings as when a long token with a digit always ran
    detect-secrets."""
    from gitmem.gate import plugins, secrets

    coding = Path(__file__).resolve().parent.parent / "fixtures" / "recall" / "coding.memories.jsonl"
    texts = _corpus() + LONG_DIGIT_TOKENS + [
        json.loads(line)["text"] for line in coding.read_text("utf-8").splitlines() if line]
    assert plugins._plugin_shapes() is not None  # recorded from the installed version
    skipped = [t for t in texts if not plugins._needs_detect_secrets(t)]
    now = [secrets.scan_secrets(t) for t in texts]
    monkeypatch.setattr(plugins, "_plugin_shapes", lambda: None)  # as before: the scanner runs
    runs_before = [t for t in texts if not plugins._needs_detect_secrets(t)]
    assert now == [secrets.scan_secrets(t) for t in texts]
    assert len(skipped) > len(runs_before) + 100  # the check spares the scanner something


def test_a_long_token_with_a_digit_does_not_load_the_scanner() -> None:
    """An ordinary path or version (~35% of the notes corpus) costs no detect-secrets
    import (60-120 ms of an add or a refresh); a token a plugin matches still does."""
    import subprocess
    import sys

    code = ("import sys; from gitmem import gate\n"
            "a = [bool(gate.scan(t)) for t in sys.argv[1:-1]]; b = 'detect_secrets' in sys.modules\n"
            "c = bool(gate.scan(sys.argv[-1])); print(a, b, c, 'detect_secrets' in sys.modules)")
    slack = "alerts go to https://hooks.slack.com/services/T0VXB969GX/B06BHZWSKGR/h8zb94D30CMAxmln4LOF"
    out = subprocess.run([sys.executable, "-c", code, *LONG_DIGIT_TOKENS, slack],
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == ["[False,", "False,", "False,", "False]", "False", "True", "True"], out


def test_recorded_plugin_patterns_of_another_version_are_not_used(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from gitmem.gate import factors, plugins

    monkeypatch.setitem(factors.DETECT_SECRETS, "version", "0.0.1")
    plugins._plugin_shapes.cache_clear()
    try:
        assert plugins._plugin_shapes() is None
        assert plugins._needs_detect_secrets(LONG_DIGIT_TOKENS[0])
    finally:
        monkeypatch.undo()
        plugins._plugin_shapes.cache_clear()
    assert plugins._plugin_shapes() is not None


def test_the_trie_finds_what_the_in_tests_find() -> None:
    """A process that scans many texts finds the factors with one regex (a trie in a
    lookahead, longest first) instead of an ``in`` test each: the same rules run."""
    texts = _corpus() + ["passwordx", "api_key=1 pass pw pwd", "xoxb-ghp_", "tokentoken", ""]
    by_in = prefilter.Present(PRESENT.rules)
    by_in.COMPILE_AFTER = 10 ** 9  # never compiles the trie
    by_trie = prefilter.Present(PRESENT.rules)
    by_trie.COMPILE_AFTER = 0
    assert by_trie.users == by_in.users and len(by_in.users) >= by_trie.TRIE_FROM
    for text in texts:
        assert by_trie.indices(text) == by_in.indices(text), text
    assert by_trie._trie is not None and by_in._trie is None


# -- a rule's first-character guard changes no match -----------------------------------

GUARDED = [re.compile(prefilter.guarded(rx, prefilter.first_guard(rx))) for rx in RULES]


def _same_matches(text: str) -> None:
    for plain, guarded in zip(COMPILED, GUARDED):
        assert [(m.span(), m.groups()) for m in plain.finditer(text)] == [
            (m.span(), m.groups()) for m in guarded.finditer(text)], (plain.pattern, text)


def test_guarded_rules_match_as_the_rules_do_on_every_corpus_text() -> None:
    assert sum(g.pattern != c.pattern for g, c in zip(GUARDED, COMPILED)) > len(RULES) // 2
    for text in _corpus():
        _same_matches(text)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(list("aAkKsS:=/-_. pwdPW0123456789\n'\"$@<") + [
    "\u212a", "\u017f", "\u0130", "пароль", "ключ", "密码", "token", "password", "ghp_", "sshpass -p ",
    "ignore previous", "curl -u "]), max_size=40).map("".join))
def test_guarded_rules_match_as_the_rules_do_on_generated_text(text: str) -> None:
    _same_matches(text)


def test_first_guards_of_hand_made_patterns() -> None:
    guard = prefilter.first_guard
    assert guard(r"(?:\bsshpass\s|\bredis-cli\b)") == "(?=(?-i:[\\x72\\x73]))"
    assert guard(r"(?i)(?<![a-z])(?:pw|token)") == "(?=(?i:[\\x70\\x74]))"  # lookbehind: zero-width
    assert guard(r"(?i)x?(?-i:y)") == "(?=(?i:[\\x78\\x79]))"  # optional: what follows may start it
    assert guard(r".+|a") is None and guard(r"[^a]b") is None and guard(r"a?") is None
    assert guard(r"ghp_[A-Za-z0-9]{36}") is None  # re finds a leading literal faster by itself
    # The Kelvin sign is a "k" to IGNORECASE: the guard ignores case as the rule does.
    assert re.search(prefilter.guarded(r"(?i)(?<!x)key", guard(r"(?i)(?<!x)key")), "\u212aey")
    assert prefilter.guarded("(?i)(?m)ab|c", "(?=[ac])") == "(?i)(?m)(?=[ac])(?:ab|c)"  # flags stay first
    assert guard(r"\d|[$@]|(?i:pass)") == r"(?=(?i:[\d\x24\x40\x70]))"  # \d, \s, \w kept as they are
    assert guard(r"\D|x") is None and guard("(?x)a b") is None


def test_the_stored_guards_are_current() -> None:
    from gitmem.gate.factors import SECRETS

    patterns = [rx for _, rx, _ in EXTRA_PATTERNS]
    assert prefilter.guards_for(patterns, SECRETS) == [prefilter.first_guard(rx) for rx in patterns]
    assert prefilter.guards_for(patterns[:3], {"digest": "0" * 16}) == [
        prefilter.first_guard(rx) for rx in patterns[:3]]


def test_the_separator_guard_holds_every_character_a_separator_can_start_with() -> None:
    """secret_rules._SEP_START lists what _SEP can start with after white space: derived
    here from _SEP's parse (each branch's first characters once its white space is skipped)."""
    from gitmem.gate import secret_rules

    body = secret_rules._SEP[len(secret_rules._SEP_START):]
    parsed = prefilter.sre_parse.parse("(?i)" + body)
    space = [(prefilter.sre_parse.IN, [(prefilter.sre_parse.CATEGORY, prefilter.sre_parse.CATEGORY_SPACE)])]
    (op, (_, branches)), *_ = parsed
    assert op is prefilter.sre_parse.BRANCH and len(branches) >= 7
    guard = re.compile("(?i)" + secret_rules._SEP_START)
    for branch in branches:
        items = list(branch)
        while items and items[0][0] in prefilter._REPEATS and list(items[0][1][2]) == space:
            items = items[1:]  # the branch's leading white space
        found, _ = prefilter._first(items, parsed.state.flags)
        assert found is not None
        for lo, hi in found[0]:
            if lo < 0:
                continue  # \s after an optional quote: the guard skips white space anyway
            for code in {lo, hi, (lo + hi) // 2}:
                assert guard.match(chr(code)) and guard.match(" \t" + chr(code)), (chr(code), branch)
    sep = re.compile("(?i)" + body)
    for text in ["pw pw", " is x", "\t: x", "x", " -> y", " คือ ", "\\\": \"", " 是 ", " Är "]:
        for at in range(len(text)):
            if sep.match(text, at):
                assert guard.match(text, at), (text, at)


def test_detect_secrets_runs_only_the_plugins_that_can_match_a_line_and_finds_the_same() -> None:
    """plugins._plugins_scan_line with the plugins _plugin_names_for names gives what
    detect-secrets' own scan_line gives, on every corpus line it is asked about."""
    from detect_secrets.core.scan import scan_line

    from gitmem.gate import plugins

    scan = plugins._detect_secrets()["scan_line"]
    assert scan is not scan_line and plugins._plugin_shapes() is not None
    lines = [line for text in _corpus() + ["-----BEGIN RSA PRIVATE KEY-----", "password = 'x7Hq2!kd9'"]
             for line in text.split("\n") if plugins._needs_detect_secrets(line)]
    assert len(lines) > 300
    fewer = 0
    for line in lines:
        names = plugins._plugin_names_for(line)
        assert names is not None
        fewer += len(names) < 5
        got = [(s.type, s.secret_value) for s in scan(line, names)]
        assert got == [(s.type, s.secret_value) for s in scan_line(line)], line
        assert got == [(s.type, s.secret_value) for s in scan(line, None)], line
    assert fewer == len(lines)


def test_the_squeezed_override_needs_one_of_its_words() -> None:
    from gitmem.gate import injection

    (op, (_, branches)), = prefilter.sre_parse.parse(injection._SQUEEZED.pattern)
    starts: set[str] = set()
    for branch in branches:  # what each branch starts with: its leading literals, or its first group's
        lead = prefilter._leading(branch)
        starts |= {lead} if lead else set(prefilter._node(*branch[0]) or {""})
    assert op is prefilter.sre_parse.BRANCH and starts == set(injection._SQUEEZED_WORDS)

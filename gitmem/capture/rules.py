"""The built-in extractor: what a session says is worth remembering, without a model.

Why rules and not a model: capture runs after every session on every clone, on
a laptop, offline. These rules find the signals that are explicit in a
transcript, and nothing else:

* explicit requests: "remember that ...", "from now on ...", "always ...",
  "never ..." (what the person typed, never the agent's own words);
* corrections: the person telling the agent it was wrong ("no, use X",
  "actually, ...", "don't use X, use Y");
* commands that kept succeeding: a test, build, lint or type-check command
  that the session ran successfully at least twice (or that passed at last
  after failing) becomes a procedure candidate;
* files the session kept returning to: read or changed in at least
  FILE_VISITS separate turns.

Each candidate carries its evidence (transcript lines and an excerpt), so a
person reviewing the inbox sees why it was proposed. Nothing here is stored:
``api.capture`` screens, deduplicates and files them.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict

import msgspec

from .classify import classify
from .transcript import Event, excerpt

COMMAND_SUCCESSES = 2  # successful runs that make a command a procedure candidate
FILE_VISITS = 3  # turns a file was read or changed in that make it a candidate
MAX_CANDIDATES = 20  # per session, per rule kind

_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_LEAD = r"^(?:(?:please|pls|and|also|so|ok|okay|good|great|thanks|oh)[\s,.!]+)*"
_REMEMBER = re.compile(_LEAD + r"(?:do\s+)?remember(?:\s+that)?[\s:,]+(.{6,})$", re.IGNORECASE)
_FROM_NOW = re.compile(r"^(?:.*?\b)?(?:from now on|going forward|in future|in the future)[\s:,]+"
                       r"(.{6,})$", re.IGNORECASE)
_ALWAYS = re.compile(_LEAD + r"(?:(?:we|you)\s+(?:should\s+)?)?(?:always|never)\b.{6,}$",
                     re.IGNORECASE)
_CORRECTION = re.compile(
    r"^(?:no[,.!:;]\s+|nope[,.!:;]?\s+|actually[,:]\s+|that'?s (?:wrong|not right)[,.!:;]?\s*|"
    r"wrong[,.!:;]\s+)(.{6,})$", re.IGNORECASE)
_INSTEAD = re.compile(r"^(?:(?:don'?t|do not) use\b.+\buse\b.+|use\b.+\binstead\b.*)$",
                      re.IGNORECASE)
_QUESTION = re.compile(r"\?\s*$")

# What a command is for, by its words (the first match names the procedure).
_PURPOSES: list[tuple[str, re.Pattern[str]]] = [
    ("run the tests", re.compile(
        r"\b(?:pytest|tox|nox|jest|vitest|mocha|rspec|phpunit|ctest|go test|cargo test|"
        r"mix test|dotnet test|(?:npm|pnpm|yarn|bun)(?: run)? test|make (?:test|check|spec)\w*|"
        r"rake (?:test|spec)|gradle\w* test|mvn\w* test|bazel test|deno test)\b")),
    ("type-check", re.compile(r"\b(?:mypy|pyright|tsc|flow check|(?:npm|pnpm|yarn) run typecheck)\b")),
    ("lint", re.compile(r"\b(?:ruff|flake8|pylint|eslint|golangci-lint|cargo clippy|rubocop|"
                        r"shellcheck|(?:npm|pnpm|yarn)(?: run)? lint|make lint)\b")),
    ("format the code", re.compile(r"\b(?:black|prettier|gofmt|rustfmt|cargo fmt|ruff format|"
                                   r"(?:npm|pnpm|yarn)(?: run)? format|make fmt|make format)\b")),
    ("build", re.compile(r"\b(?:make(?: build| all)?$|cargo build|go build|(?:npm|pnpm|yarn)(?: run)? "
                         r"build|gradle\w* build|mvn\w* (?:package|install)|bazel build|"
                         r"python -m build|docker build|cmake --build)\b")),
]
_NOISE = re.compile(r"^(?:cd|ls|cat|echo|pwd|head|tail|grep|rg|find|git (?:status|diff|log|show|add)"
                    r"|sed -n|which|wc)\b")


class Candidate(msgspec.Struct, kw_only=True):
    """A memory the session suggests, with the evidence for it."""

    text: str
    kind: str = "note"
    tags: list[str] = []
    paths: list[str] = []
    reason: str  # which rule proposed it
    evidence: list[tuple[int, str]] = []  # (transcript line, excerpt)
    importance: float = 0.5
    command: str | None = None  # for a command: the command line itself


def extract(events: list[Event]) -> list[Candidate]:
    """Every candidate the rules find in a session's events, in order of first evidence."""
    out = _requests(events) + _commands(events) + _files(events)
    return sorted(out, key=lambda c: c.evidence[0][0] if c.evidence else 0)


def _sentences(text: str) -> list[str]:
    return [s.strip(" \t-*>\"'") for s in _SENTENCE.split(text) if s.strip()]


def _requests(events: list[Event]) -> list[Candidate]:
    out: list[Candidate] = []
    seen: set[str] = set()
    for e in events:
        if e.kind != "said":
            continue
        for sentence in _sentences(e.text):
            if len(sentence) > 400 or _QUESTION.search(sentence):
                continue  # a question asks; it does not tell
            found = _one_request(sentence)
            if found is None:
                continue
            text, reason = found
            norm = text.casefold()
            if norm in seen:
                continue
            seen.add(norm)
            kind, tags = classify(text)
            out.append(Candidate(text=text, kind=kind, tags=tags, reason=reason,
                                 evidence=[(e.line, excerpt(e.text))], importance=0.6))
            if len(out) >= MAX_CANDIDATES:
                return out
    return out


def _one_request(sentence: str) -> tuple[str, str] | None:
    if m := _REMEMBER.match(sentence):
        return _tidy(m.group(1)), "explicit request"
    if m := _FROM_NOW.match(sentence):
        return _tidy(m.group(1)), "explicit request"
    if _ALWAYS.match(sentence):
        return _tidy(sentence), "explicit request"
    if m := _CORRECTION.match(sentence):
        return _tidy(m.group(1)), "correction"
    if _INSTEAD.match(sentence):
        return _tidy(sentence), "correction"
    return None


def _tidy(text: str) -> str:
    text = text.strip().rstrip(",;:")
    if text and text[0].islower():
        text = text[0].upper() + text[1:]
    if text and text[-1] not in ".!)`\"'":
        text += "."
    return text


def purpose(command: str) -> str | None:
    """What a shell command is for ("run the tests", "lint", ...), or None."""
    for name, pattern in _PURPOSES:
        if pattern.search(command):
            return name
    return None


def _commands(events: list[Event]) -> list[Candidate]:
    runs: dict[str, list[Event]] = defaultdict(list)
    for e in events:
        if e.kind == "command" and e.ok is not None and not _NOISE.match(e.text):
            if "\n" not in e.text and len(e.text) <= 200:
                runs[e.text].append(e)
    out: list[Candidate] = []
    taken: set[str] = set()
    for command, seen in runs.items():
        what = purpose(command)
        if what is None or what in taken:
            continue
        wins = [e for e in seen if e.ok]
        # Twice green, or green at last after a failure: the way this repository does it.
        if len(wins) >= COMMAND_SUCCESSES or (wins and seen[-1].ok and len(seen) > 1):
            taken.add(what)
            out.append(Candidate(
                text=f"To {what}: `{command}`", kind="procedure", tags=["capture"],
                reason=f"command succeeded {len(wins)} of {len(seen)} times",
                evidence=[(e.line, excerpt(e.text)) for e in seen[:5]], importance=0.6,
                command=command))
        if len(out) >= MAX_CANDIDATES:
            break
    return out


def _files(events: list[Event]) -> list[Candidate]:
    turns: Counter[str] = Counter()
    lines: dict[str, list[int]] = defaultdict(list)
    turn = 0
    counted: set[tuple[str, int]] = set()
    for e in events:
        if e.kind == "said":
            turn += 1
        elif e.kind == "file":
            lines[e.text].append(e.line)
            if (e.text, turn) not in counted:
                counted.add((e.text, turn))
                turns[e.text] += 1
    out = []
    for path, n in turns.most_common(MAX_CANDIDATES):
        if n < FILE_VISITS:
            break
        out.append(Candidate(
            text=f"Work here keeps coming back to {path}.", kind="note", tags=["capture",
                                                                                "hot-file"],
            paths=[path], reason=f"read or changed in {n} turns",
            evidence=[(line, path) for line in lines[path][:5]], importance=0.3))
    return out

"""The write gate as the library applies it: to every free field that reaches an agent.

Why this exists: ``gitmem.gate`` scans one string; this module decides which
fields of an op are scanned (the text, key, tags, entities, source, session,
paths, the author's name, reasons), how a refusal is reported (one error
listing the first findings, the secret never echoed), what ``--redact`` may mask,
and how replay asks "would the gate refuse this today?" to quarantine what
came from others. Write and replay scan the same fields the same way, one at
a time, so what the writer accepted replays unquarantined (with the same gate).
``gitmem.gate`` (and detect-secrets) is imported only when text is scanned.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import msgspec

from .. import hashes, ops
from ..errors import GateRefused

# Bumped when the set of fields scanned changes: cached verdicts (the
# projection keys them by op id and this version) are then asked again.
FIELDS_VERSION = 4  # 3: code anchors (paths, symbols), confirm anchors; 4: link ends

AUTHOR_HINT = ('use your own plain name: git config user.name "Your Name" '
               "(or GIT_AUTHOR_NAME)")


_programs: Path | None = None  # where the gate keeps compiled patterns (None: nowhere)
_gate_module: ModuleType | None = None  # gitmem.gate, once imported here


def keep_programs_in(directory: Path | None) -> None:
    """Have the gate keep its compiled patterns in ``directory`` (gate/programs.py:
    ~5 of the ~10 ms a fresh add spent compiling, ~35 ms of a refresh of 1k pulled
    ops). Cheap: the gate is not imported for this."""
    global _programs
    _programs = directory
    if _gate_module is not None:
        _gate_module.programs.keep_in(directory)


def _gate() -> ModuleType:
    """``gitmem.gate``, told where to keep its compiled patterns (imported on first
    use: a read never scans)."""
    global _gate_module
    if _gate_module is None:
        from .. import gate

        gate.programs.keep_in(_programs)
        _gate_module = gate
    return _gate_module


def gate_version() -> str:
    gate = _gate()
    return f"{gate.version()}/fields-{FIELDS_VERSION}"


def _fields(body: ops.MemoryBody) -> list[tuple[str, str]]:
    """(name, value) of every free field of a memory, as findings name them."""
    return [("text", body.text), ("key", body.key or ""), ("tags", "\n".join(body.tags)),
            ("about", "\n".join(body.entities)), ("source", body.source or ""),
            ("session", body.session or ""), *_anchor_fields(body.anchors),
            ("link", f"{body.link.src}\n{body.link.dst}" if body.link is not None else "")]


def _anchor_fields(anchors: ops.Anchors) -> list[tuple[str, str]]:
    """The free text anchors carry: paths (anchored or not) and symbols."""
    paths = list(dict.fromkeys([*anchors.paths, *(a.path for a in anchors.code)]))
    return [("paths", "\n".join(paths)),
            ("symbols", "\n".join(a.symbol for a in anchors.code if a.symbol))]


def quarantine_reason(item: ops.Op | ops.MemoryBody) -> str | None:
    """Why a replayed op (or a memory alone) would not pass the write gate today, or None.

    For an add: its memory's fields and its author's name; for an invalidate,
    forget or confirm: its author's name and its reason.
    """
    if isinstance(item, ops.MemoryBody):
        fields = _fields(item)
    else:
        fields = [("author name", item.author.name)]
        if isinstance(item, ops.AddOp):
            fields = _fields(item.memory) + fields
        else:
            fields.append(("reason", item.reason or ""))
            if isinstance(item, ops.ConfirmOp) and item.anchors is not None:
                fields += _anchor_fields(item.anchors)
    found = [f + ("" if name == "text" else f" in {name}")
             for name, value in fields if value for f in _scan(value)]
    return "; ".join(found[:3]) if found else None


def screened_add_verdict(author: ops.Author) -> str | None:
    """``quarantine_reason`` of an add whose memory passed ``screen`` (at this gate
    version): nothing in the memory's fields, so only its author's name can still
    be refused. (A writer that screened many memories hands this to the replay of
    its own ops instead of having each scanned again.)"""
    found = [f"{f} in author name" for f in _scan(author.name)]
    return "; ".join(found[:3]) if found else None


def screen(body: ops.MemoryBody, *, redact: bool) -> ops.MemoryBody:
    """Run the write gate over every free-text field of a memory."""
    gate = _gate()

    found_all: list[str] = []
    elsewhere = False  # a finding outside the text, which --redact does not mask
    text = body.text
    for name, value in _fields(body):
        if not value:
            continue
        if name == "text" and redact:
            found = gate.scan(value)
            if found and all(f.category == "secret" for f in found):
                text, _ = gate.redact(value)
                found = gate.scan(text)
            described: tuple[str, ...] = tuple(f.describe() for f in found)
        else:
            described = _scan(value)  # remembered: replaying this op asks again
        found_all += [f + ("" if name == "text" else f" in {name}") for f in described]
        elsewhere = elsewhere or (bool(described) and name != "text")
    if found_all:
        secret_only = all(f.startswith("secret") for f in found_all)
        hint = ("remove it, or use --redact to store the text with secrets masked"
                if secret_only and not redact and not elsewhere else
                "remove it: memories are shared with every clone and read by agents "
                "(see docs/security.md)")
        raise GateRefused(found_all, hint)
    return msgspec.structs.replace(body, text=text) if text != body.text else body


def anchor_findings(anchors: ops.Anchors) -> list[str]:
    """What the gate finds in the free text of anchors (paths, symbols): a rename
    can give the code an anchor's new name that the gate refuses."""
    return [f"{f} in {name}" for name, value in _anchor_fields(anchors) if value
            for f in _scan(value)]


def screen_author(name: str) -> None:
    """The author's name is printed beside every memory in an agent's context:
    refuse one the gate would refuse (replay would quarantine the op)."""
    found = _scan(name)
    if found:
        raise GateRefused([f"{f} in author name" for f in found], AUTHOR_HINT)


# A text's findings are named up to this many (a verdict names three, across fields; a
# refusal lists these): a text built to hold thousands costs no more than its first.
FINDINGS_NAMED = 8


def findings(text: str) -> list[str]:
    """What the gate finds in ``text``, described (its first FINDINGS_NAMED)."""
    gate = _gate()

    return [f.describe() for f in gate.scan(text, FINDINGS_NAMED)]


def _scan(text: str) -> tuple[str, ...]:
    """``findings``, remembered: a replay asks about the same author names and
    reasons over and over, and an import's own ops are replayed right after
    being checked (the same gate, the same text, the same answer).

    Keyed by a 128-bit digest, not the text, and cleared when full: an import of
    any size keeps at most ``_MEMO_SIZE`` small entries (~5 MB)."""
    key = _key(text)
    found = _memo.get(key)
    if found is None:
        found = tuple(findings(text))
        if len(_memo) >= _MEMO_SIZE:
            _memo.clear()
        _memo[key] = found
    return found


_MEMO_SIZE = 32768
_memo: dict[bytes, tuple[str, ...]] = {}
# From this many texts a prescan hands half to a forked child (a fork costs ~2 ms).
PRESCAN_FROM = 512
# A child slower than this is killed and its half scanned here when asked.
PRESCAN_PATIENCE = 60.0


def prescan(texts: list[str]) -> None:
    """Fill the memo for ``texts`` on both cores: a forked child scans the second
    half while this process scans the first (an import checks thousands of lines
    and the gate is half its time). The child runs the very same ``findings`` and
    sends them back; anything it fails to send is scanned here when asked."""
    todo = list(dict.fromkeys(t for t in texts if _key(t) not in _memo))[: _MEMO_SIZE // 2]
    if len(todo) < PRESCAN_FROM:
        return
    from .. import forked  # here: a one-line add never forks
    half = len(todo) // 2
    theirs = todo[half:]
    child = forked.Child.start(lambda: msgspec.msgpack.encode([findings(t) for t in theirs]))
    if child is None:
        return
    try:
        if len(_memo) + len(todo) > _MEMO_SIZE:
            _memo.clear()
        for t in todo[:half]:
            _scan(t)
        payload = child.result(PRESCAN_PATIENCE)
        found = msgspec.msgpack.decode(payload, type=list[list[str]]) if payload else []
    except msgspec.DecodeError:
        return
    finally:
        child.close()
    if len(found) == len(theirs):
        for t, f in zip(theirs, found):
            _memo[_key(t)] = tuple(f)


def _key(text: str) -> bytes:
    return hashes.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


def screen_reason(reason: str | None) -> str | None:
    """A reason is free text that replicates like a memory: the same gate applies."""
    found = findings(reason) if reason else []
    if found:
        raise GateRefused([f"{f} in reason" for f in found],
                          "remove it from the reason: reasons are shared with every clone")
    return reason

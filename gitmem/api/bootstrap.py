"""Bootstrap: memories from what a repository's instruction files already say.

``git mem bootstrap`` reads the files agents and people already keep
(CLAUDE.md, AGENTS.md, GEMINI.md, Cursor rules, Copilot instructions,
CONTRIBUTING.md, ADRs) and proposes one memory per bullet or short section:
a procedure when it tells how to do something with a command, a convention
(a note tagged ``convention``) when it says always or never, a decision for an
ADR, a note otherwise. Each is anchored to its file and lines (and any path it
names), so it turns stale when its source changes.

It shows what it would add (a dry run, the default) and adds on ``yes``.
Re-running adds nothing new: a candidate whose text is already a current memory
is skipped. When a line changed, the new text supersedes the memory that came
from the old one (same file, overlapping lines, text no longer in the file).
Our own blocks are never read back: the one ``git mem export`` writes, and the usage
text ``git mem agents-md`` prints (between its markers, or without them under its
heading). Every write passes the
write gate; what it refuses is reported, not fatal.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from .. import gate, ops
from ..capture.classify import classify
from ..errors import GateRefused, NearDuplicate
from ..model import BootstrapItem, BootstrapReport
from . import export, gating

if TYPE_CHECKING:
    from ..projection import Projection
    from .pool import Pool

# Where instruction files live (globs relative to the repository root).
SOURCES = ("CLAUDE.md", "AGENTS.md", "GEMINI.md", ".cursorrules", ".cursor/rules/*.md",
           ".cursor/rules/*.mdc", ".github/copilot-instructions.md", "CONTRIBUTING.md",
           "docs/adr/*.md", "doc/adr/*.md", "docs/decisions/*.md")
SOURCE_TAG = "bootstrap"
MAX_SECTION_CHARS = 600  # a section without bullets becomes one memory up to this size
MAX_FILE_BYTES = 256 * 1024
_BULLET = re.compile(r"^(\s*)(?:[-*+]|\d+[.)])\s+(.*)$")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
class Candidate:
    """One memory a file proposes: its text, kind, tags and where it came from."""

    def __init__(self, path: str, first: int, last: int, text: str, kind: str,
                 tags: list[str]) -> None:
        self.path, self.first, self.last = path, first, last
        self.text, self.kind, self.tags = text, kind, tags


def files(root: Path) -> list[str]:
    """The instruction files present, relative to ``root``, in a stable order: files
    of the work tree itself, never through a link (a committed ``.cursor/rules``
    linking to ~/.claude made the person's own CLAUDE.md a team memory)."""
    from .validate import foreign_file

    found: list[str] = []
    for pattern in SOURCES:
        for f in sorted(root.glob(pattern)):
            rel = f.relative_to(root).as_posix()
            if (f.is_file() and not f.is_symlink() and rel not in found
                    and foreign_file(root, f) is None):
                found.append(rel)
    return found


def candidates(path: str, text: str) -> list[Candidate]:
    """What one file proposes (pure: the text of ``path``)."""
    adr = "/adr/" in f"/{path}" or "/decisions/" in f"/{path}"
    if adr:
        return _adr(path, text)
    out: list[Candidate] = []
    for first, last, body, heading in _blocks(_without_export(text)):
        kind, tags = classify(body)
        if heading and len(body) < 40 and kind == "note":
            body = f"{heading}: {body}"
        out.append(Candidate(path, first, last, body, kind, tags))
    return out


def _without_export(text: str) -> str:
    """The file with ``git mem export``'s block and the usage block ``git mem hooks
    install`` adds blanked (line numbers kept): both are ours, not the repository's
    (found as export.block_span finds them: a stray begin line above is the file's)."""
    for begin, end in ((export.BEGIN, export.END), (export.AGENTS_BEGIN, export.AGENTS_END)):
        # Every copy: an export before 2026-11-28 could leave several (an end marker
        # quoted above the block added one each time). Blanking removes its markers.
        while (span := export.block_span(text, begin, end)) is not None:
            text = text[:span[0]] + "\n" * text.count("\n", span[0], span[1]) + text[span[1]:]
    return _without_usage(text)


# The heading of the usage text 'git mem agents-md' prints (gitmem/agents/agents_md.py;
# the same since it was written).
USAGE_HEADING = "Memory: git mem"


def _without_usage(text: str) -> str:
    """The file with our usage section blanked when its markers were lost: from a
    heading "Memory: git mem" (any level) to the next heading of any level (ours has
    none inside it; a review: a team's "### Deploy" after it was skipped too), a
    Setext one ("Release process" over "----") included.
    'git mem agents-md' printed it without markers until 2026-11-28, so the documented
    'agents-md >> AGENTS.md' left it bare in many files; a person may also have dropped
    the markers while editing. The heading is ours; a team writing its own rules under
    it writes rules about git mem, which are no memory of the repository either."""
    lines = text.splitlines(keepends=True)
    skipping = False
    in_code = False
    for n, line in enumerate(lines):
        if line.lstrip().startswith("```"):
            in_code = not in_code
        h = None if in_code else _HEADING.match(line.rstrip("\r\n"))
        # (A list item over "---" is an item and a rule, no heading: a review found
        # our own last bullet read back so.)
        underlined = (not in_code and line.strip() != "" and n + 1 < len(lines)
                      and _SETEXT.match(lines[n + 1]) is not None and not _BULLET.match(line))
        if skipping and (h or underlined):
            skipping = False
        if h and h.group(2).strip() == USAGE_HEADING:
            skipping = True
        if skipping:
            lines[n] = "\n" if line.endswith("\n") else ""
    return "".join(lines)


# A Setext heading's underline (the line of text above it is the heading).
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*\r?\n?$")


def _blocks(text: str) -> Iterator[tuple[int, int, str, str]]:
    """(first line, last line, text, heading) of each bullet, and of each short
    section without bullets; code blocks and front matter are skipped."""
    lines = text.splitlines()
    heading = ""
    para: list[tuple[int, str]] = []
    bullet: list[tuple[int, str]] = []
    in_code = False

    def flush_bullet() -> Iterator[tuple[int, int, str, str]]:
        if bullet:
            body = " ".join(t.strip() for _, t in bullet).strip()
            if len(body) >= 12:
                yield bullet[0][0], bullet[-1][0], body, heading
            bullet.clear()

    def flush_para() -> Iterator[tuple[int, int, str, str]]:
        if para:
            body = " ".join(t.strip() for _, t in para).strip()
            if 12 <= len(body) <= MAX_SECTION_CHARS:
                yield para[0][0], para[-1][0], body, heading
            para.clear()

    start = 0
    if lines and lines[0].strip() == "---":  # front matter (.mdc rules)
        for j in range(1, len(lines)):
            if lines[j].strip() == "---":
                start = j + 1
                break
    for n in range(start, len(lines)):
        line, number = lines[n], n + 1
        if line.lstrip().startswith("```"):
            in_code = not in_code
            yield from flush_bullet()
            yield from flush_para()
            continue
        if in_code:
            continue
        h = _HEADING.match(line)
        b = _BULLET.match(line)
        if para and not bullet and _SETEXT.match(line):
            # A Setext heading: the paragraph above the underline is the heading.
            heading = " ".join(t.strip() for _, t in para)
            para.clear()
        elif h:
            yield from flush_bullet()
            yield from flush_para()
            heading = h.group(2)
        elif b:
            yield from flush_para()
            yield from flush_bullet()
            bullet.append((number, b.group(2)))
        elif not line.strip():
            yield from flush_bullet()
            yield from flush_para()
        elif bullet and line.startswith((" ", "\t")):
            bullet.append((number, line))  # a bullet's continuation
        elif not line.lstrip().startswith(("<!--", "|", ">")):
            yield from flush_bullet()
            para.append((number, line))
    yield from flush_bullet()
    yield from flush_para()


def _adr(path: str, text: str) -> list[Candidate]:
    """An ADR is one decision: its title and its Decision section."""
    lines = text.splitlines()
    title = next((m.group(2) for m in map(_HEADING.match, lines) if m), Path(path).stem)
    decision: list[str] = []
    taking = False
    first = last = 1
    for n, line in enumerate(lines, 1):
        h = _HEADING.match(line)
        if h:
            taking = h.group(2).strip().lower().startswith("decision")
            if taking:
                first = n
            continue
        if taking and line.strip():
            decision.append(line.strip().lstrip("-* ").strip())
            last = n
    body = " ".join(decision)
    if not body:
        return []
    text_out = f"Decision ({title}): {body}"
    if len(text_out) > MAX_SECTION_CHARS * 2:
        text_out = text_out[: MAX_SECTION_CHARS * 2 - 1] + "…"
    return [Candidate(path, first, last, text_out, "note", ["decision"])]


# -- the run -----------------------------------------------------------------------------


def run(pool: Pool, *, yes: bool = False) -> BootstrapReport:
    """Propose (and with ``yes`` add) a memory per bullet or short section."""
    from . import write

    root = pool.log.workdir
    proposals: list[Candidate] = []
    for rel in files(root):
        try:
            with open(root / rel, "rb") as fh:  # not the whole of a huge file
                data = fh.read(MAX_FILE_BYTES)
        except OSError:
            continue
        proposals += candidates(rel, data.decode("utf-8", errors="replace"))
    texts_now = {ops.normalize_text(c.text) for c in proposals}

    def known(p: Projection) -> tuple[set[str], list[tuple[str, str, str, int, int]]]:
        have = {c.text for c in proposals if p.duplicate_of(c.text, c.kind, None)}
        return have, p.bootstrapped()

    have, earlier = pool.read(known)
    report = BootstrapReport(dry_run=not yes, files=files(root))
    for c in proposals:
        item = BootstrapItem(text=c.text, kind=c.kind, tags=c.tags,
                             source=f"{c.path}:{c.first}-{c.last}", status="new")
        found = gating.findings(c.text)
        if found:
            # Refused in a dry run too, and never echoed: a secret committed to a
            # file must not travel on into an agent's context from here.
            item.status, item.why = "refused", "; ".join(found[:3])
            item.text = gate.redact(c.text)[0]
            report.items.append(item)
            continue
        if c.text in have:
            item.status = "known"
            report.items.append(item)
            continue
        # A changed line: the memory that came from the same lines, whose text is
        # no longer in the file, is superseded by the new text.
        old = [mid for mid, path, text, first, last in earlier
               if path == c.path and first <= c.last and c.first <= last
               and ops.normalize_text(text) not in texts_now]
        item.supersedes = old
        if yes:
            try:
                added = write.add(pool, c.text, kind=c.kind, tags=c.tags,
                                  paths=[f"{root / c.path}:{c.first}-{c.last}"],
                                  source=SOURCE_TAG,
                                  supersedes=old)
                item.id = added.id
                item.status = "added" if added.duplicate_of is None else "known"
            except GateRefused as exc:  # a field the check above does not see
                item.status, item.why = "refused", exc.message
                item.text = gate.redact(c.text)[0]
            except NearDuplicate as exc:
                item.status = "similar"
                item.why = exc.message
        report.items.append(item)
    return report

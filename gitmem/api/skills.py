"""Skills that graduate: a procedure that keeps working becomes a SKILL.md.

A procedure records outcomes (``git mem confirm ID --worked`` / ``--failed``,
or a capture that saw its command succeed). When one has worked at least
``gitmem.skillThreshold`` times (default 3) and failed at most a quarter as
often, ``git mem skills`` proposes a skill file in the cross-agent format (YAML
front matter with ``name`` and ``description``, then the steps) under the
skills folder (``gitmem.skillsDir``, default ``.claude/skills``), shown as a
unified diff. Nothing is written without ``--write``; then the procedure is
superseded by a short reference memory (tagged ``skill``, anchored to the file)
that keeps the stats, not the body, and keeps counting outcomes.

A skill whose reference keeps failing (RETIRE_FAILURES failures, more than it
worked) or has gone unused for ``gitmem.skillIdleDays`` (default 90) is
proposed for retirement: listed with the commands to do it, never deleted.
"""

from __future__ import annotations

import difflib
import os
import re
import stat
from pathlib import Path

from ..errors import InvalidInput
from ..model import SkillProposal
from ..oplog import state
from ..projection import Projection
from ..timefmt import iso
from .. import hashes
from . import export, settings, validate, write
from .pool import Pool

DEFAULT_DIR = ".claude/skills"
THRESHOLD = 3
IDLE_DAYS = 90.0
RETIRE_FAILURES = 3
MAX_READ = 256 << 10  # of a SKILL.md already there (a committed one may be anything)
MARK = "<!-- git mem: procedure {id} -->"
_MARKED = re.compile(r"<!-- git mem: procedure ([0-9a-f]{64}) -->")
_COUNTS = re.compile(r"<!-- worked (\d{1,9}) of (\d{1,9}) recorded runs when it graduated -->")
_WORD = re.compile(r"[a-z0-9]+")
_STOP = {"the", "a", "an", "to", "with", "and", "or", "of", "in", "on", "for", "run", "use",
         "by", "it", "is", "we", "our", "this", "that"}


def propose(pool: Pool, *, write_files: bool = False) -> list[SkillProposal]:
    """What ``git mem skills`` shows (and with ``write_files`` does)."""
    threshold = settings.setting(pool.log, "gitmem.skillThreshold", _count, THRESHOLD,
                                 "use a whole number of successful runs, e.g. 3")
    idle = settings.setting(pool.log, "gitmem.skillIdleDays", float, IDLE_DAYS,
                            "use a number of days, e.g. 90")
    folder = settings.setting(pool.log, "gitmem.skillsDir", str, DEFAULT_DIR,
                              "name a folder of the work tree, e.g. .claude/skills")
    root = pool.log.workdir
    base = _inside(root, folder)
    now = settings.now()
    out: list[SkillProposal] = []

    def stats(p: Projection) -> list[tuple[str, str, str | None, list[str], int, int,
                                           int | None, int]]:
        return p.procedure_outcomes()

    taken: dict[str, str] = {}  # folder name -> the procedure (memory id) it was given to
    rows = sorted(pool.read(stats, embed=False), key=lambda r: (r[2] or "", r[0]))
    # The references of skills written already: a procedure's next version that takes
    # a folder over supersedes its predecessor's (it would count outcomes and propose
    # retiring a file that holds another text now).
    references = {mid for mid, _, _, tags, *_ in rows if "skill" in tags}
    for mid, text, key, tags, worked, failed, last, at in rows:
        last_iso = iso(last, 0) if last else None
        if "skill" in tags:  # a reference: the body lives in its SKILL.md
            idle_days = (now - (last or at)) / 86400
            why = None
            if failed >= RETIRE_FAILURES and failed > worked:
                why = f"failed {failed} times, worked {worked}"
            elif idle_days > idle:
                why = f"no outcome recorded for {idle_days:.0f} days"
            if why:
                name = _name_in(text)
                out.append(SkillProposal(
                    action="retire", name=name, path=f"{folder.rstrip('/')}/{name}/SKILL.md",
                    memory=mid, text=text, worked=worked, failed=failed,
                    last_outcome=last_iso, reason=why))
            continue
        if worked < threshold or failed * 4 > worked:
            continue
        # A key is a teammate's words: only letters and digits reach a file name
        # ('/tmp/x' made the path absolute, and every 'git mem skills' fail).
        name = "-".join(_WORD.findall(key.lower()))[:64].strip("-") if key else ""
        name = name or slug(text)
        name, earlier = _own_folder(pool, base, name, mid, key, text, taken)
        taken[name] = mid
        path = base / name / "SKILL.md"
        problem = validate.foreign_file(root, path)
        if problem is not None:  # a committed link out of the tree: never read or written
            out.append(SkillProposal(
                action="refused", name=name, path=f"{folder.rstrip('/')}/{name}/SKILL.md",
                memory=mid, text=text, worked=worked, failed=failed, last_outcome=last_iso,
                reason=problem))
            continue
        new = render(name, text, mid, worked, failed)
        old = _read(root, path)
        rel = path.relative_to(root).as_posix()
        item = SkillProposal(action="current" if old == new else "graduate", name=name,
                             path=rel, memory=mid, text=text, worked=worked, failed=failed,
                             last_outcome=last_iso,
                             reason=f"worked {worked} of {worked + failed} times")
        if old != new:
            item.diff = "".join(difflib.unified_diff(
                (old or "").splitlines(keepends=True), new.splitlines(keepends=True),
                fromfile=f"a/{rel}" if old is not None else "/dev/null", tofile=f"b/{rel}"))
        if write_files and item.action == "graduate":
            _write(root, path, new)
            item.written = True
            added = write.add(
                pool, f"Skill {name} ({rel}) holds this procedure now; it worked {worked} of "
                      f"{worked + failed} times before it became a skill.",
                kind="procedure", tags=["skill"], paths=[str(path)],
                supersedes=[mid, *([earlier] if earlier in references else [])],
                source="git mem skills", force=True, anchor=False)
            item.reference = added.id
        out.append(item)
    order = {"graduate": 0, "retire": 1, "refused": 2, "current": 3}
    return sorted(out, key=lambda s: (order[s.action], s.name))


def _own_folder(pool: Pool, base: Path, name: str, mid: str, key: str | None, text: str,
                taken: dict[str, str]) -> tuple[str, str | None]:
    """``name``, or the first of ``name-<hash>`` that no other procedure holds, in this
    run (``taken``) or on disk: keys that differ in punctuation or case only
    ("deploy_prod", "deploy.prod") make one name, and --write made the second
    overwrite the first's file, in one run or a later one. With it, the reference
    memory of the earlier version whose folder this one takes over, if any."""
    candidate, n = name, 0
    while True:
        if taken.get(candidate) in (None, mid):
            ours, earlier = _ours(pool, base / candidate / "SKILL.md", candidate, mid, key)
            if ours:
                return candidate, earlier
        n += 1
        words = key or text
        salt = words if n == 1 else f"{words}\0{n}"
        candidate = f"{name}-{hashes.sha256(salt.encode()).hexdigest()[:6]}"


def _ours(pool: Pool, path: Path, name: str, mid: str,
          key: str | None) -> tuple[bool, str | None]:
    """Whether ``path`` may hold the skill of memory ``mid`` (and the reference that
    superseded the earlier version it takes over): there is no such file, or its mark
    names ``mid``, or an earlier value of the same key and the file is still what git
    mem wrote for it (the procedure's next version takes its folder over; a file a
    person edited since is theirs to keep). A SKILL.md with no mark was written by a
    person, and one whose mark names another procedure is that one's; so is anything
    else of the tree there that is no regular file (a folder, a FIFO, a link to one:
    until 2026-11-28 those were refused, and the procedure never graduated, where a
    person's file only moved it to a folder of its own), and a link to nothing (its
    target is a path of the teammate's choosing: never created). A path leading out
    of the tree or into its git dir, whatever it ends at, is never read here: the
    caller refuses it with the reason (reading first followed a link to /dev/zero
    until memory ran out)."""
    root = pool.log.workdir
    if validate.leads_away(root, path) is not None:
        return True, None  # the caller refuses and lists it
    if _not_a_file(root, path):
        return False, None
    body = _read(root, path)
    if body is None:
        return True, None
    found = _MARKED.search(body)
    if found is None:
        return False, None
    holder = found.group(1)
    if holder == mid:
        return True, None
    if not key:
        return False, None
    earlier = pool.read(lambda p: p.record(holder), embed=False)
    if earlier is None or earlier.key != key:
        return False, None
    counts = _COUNTS.search(body)
    worked, runs = (int(counts.group(1)), int(counts.group(2))) if counts else (0, 0)
    if body != render(name, earlier.text or "", holder, worked, runs - worked):
        return False, None
    return True, earlier.retired_by


def _not_a_file(root: Path, path: Path) -> bool:
    """Something that is neither a regular file nor nothing sits at ``path`` in the tree
    ``root``: a folder, a FIFO, a socket, a link to one of those, or a link (the file
    itself or a folder on its way) to nothing. Writing through that link would create
    whatever it names, folders and all (a committed ``SKILL.md ->
    ../../../nowhere/SKILL.md``). Looked at with lstat only: never opened, never
    followed out of the tree (the caller has checked ``validate.leads_away``)."""
    real = Path(os.path.realpath(path))
    real_root = Path(os.path.realpath(root))
    if real_root not in real.parents:
        return False  # out of the tree: the caller refuses it
    try:
        return not stat.S_ISREG(os.lstat(real).st_mode)
    except FileNotFoundError:
        pass
    except OSError:
        return False
    for step in [path, *path.parents]:  # nothing at the end: is a link on the way dangling?
        if step in (root, real_root) or step == step.parent:
            return False
        if os.path.islink(step) and not os.path.exists(step):
            return True
    return False


def _resolved(root: Path, path: Path) -> Path | None:
    """``path`` with its links resolved, None unless that is a regular file of the tree
    ``root`` or nothing (``validate.foreign_file`` again, on the resolved path: the
    read or write then uses it and never resolves a link put there since)."""
    real = Path(os.path.realpath(path))
    return real if validate.foreign_file(root, real) is None else None


def _read(root: Path, path: Path) -> str | None:
    """A SKILL.md's text (the first MAX_READ bytes), None when it cannot be read. The
    path has passed ``validate.foreign_file`` (a regular file of the tree, or a link to
    one, resolved here); whatever was put there since (a link, a FIFO) is not followed
    nor waited on (O_NOFOLLOW, O_NONBLOCK, checked with fstat)."""
    real = _resolved(root, path)
    if real is None:
        return None
    try:
        data = state.read_regular(real, MAX_READ, follow=False)
    except OSError:
        return None
    return data.decode("utf-8", errors="replace")


def _write(root: Path, path: Path, text: str) -> None:
    """Write a SKILL.md all or nothing (``export.replace_file``: a new file beside it
    renamed onto it, after an lstat finds a regular file there or none: a link, a FIFO
    or a folder put there after the checks is never written through). A link the
    checks passed (to a file of the tree) is written through, as before; a link to
    nothing is not (its target is never created), and the folders made are those of
    ``path`` (a link to nothing on the way stops them)."""
    real = _resolved(root, path)
    if real is None or _not_a_file(root, path):  # something was put there since the checks
        raise InvalidInput(f"{validate.foreign_file(root, path) or path}: changed since it was "
                           "checked; it was not written",
                           "look at what is there, then run 'git mem skills --write' again")
    path.parent.mkdir(parents=True, exist_ok=True)
    export.replace_file(real, text.encode("utf-8"))


def render(name: str, text: str, mid: str, worked: int, failed: int) -> str:
    """The SKILL.md for a procedure: front matter, then the steps."""
    description = _first_sentence(text).replace('"', "'")
    return (f"---\nname: {name}\ndescription: \"{description}\"\n---\n\n"
            f"# {name.replace('-', ' ').capitalize()}\n\n{text.strip()}\n\n"
            f"{MARK.format(id=mid)}\n"
            f"<!-- worked {worked} of {worked + failed} recorded runs when it graduated -->\n")


def slug(text: str) -> str:
    """A skill name from a procedure's words: lower-case, hyphens, at most 5 words."""
    words = [w for w in _WORD.findall(text.lower()) if w not in _STOP][:5]
    return "-".join(words)[:64].strip("-") or "procedure"


def _first_sentence(text: str) -> str:
    first = re.split(r"(?<=[.!?])\s|\n", text.strip(), maxsplit=1)[0]
    return first[:200]


def _name_in(text: str) -> str:
    m = re.match(r"Skill ([a-z0-9-]+) ", text)
    return m.group(1) if m else slug(text)


def _count(raw: str) -> int:
    n = int(raw)
    if n < 1:
        raise ValueError(raw)
    return n


def _inside(root: Path, folder: str) -> Path:
    base = (root / folder).resolve()
    try:
        base.relative_to(root.resolve())
    except ValueError:
        raise InvalidInput(f"gitmem.skillsDir '{folder}' is outside the work tree",
                           "name a folder inside the repository, e.g. .claude/skills") from None
    return base

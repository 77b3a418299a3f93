"""Checking what a caller asks to remember, before anything is written.

Why this exists: every front end (CLI, MCP, hooks, import, the library) funnels
user input through these functions, so a bad value is refused the same way
everywhere with a one-line error and a hint, and nothing reaches the log that
replay would skip or quarantine: the field rules are ``ops``' (the ones replay
applies), and ``check_writable`` runs the very checks every reader runs.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from .. import ops
from ..errors import EmptyText, InvalidInput
from ..timefmt import parse_date


def utf8(value: str, what: str, hint: str = "pass the text in UTF-8 (check the terminal's "
         "encoding)") -> None:
    """InvalidInput unless ``value`` is valid text: bytes that are not UTF-8 arrive as
    lone surrogates, which SQLite cannot bind and JSON cannot carry."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(f"{what} is not valid UTF-8", hint) from None


def well_formed(**named: str | Sequence[str] | None) -> None:
    """``utf8`` for a query and each filter of a read (a bad one looked like a
    damaged projection, rebuilt for nothing), and at most MAX_LIST_ITEMS values of
    each filter (every one is a clause of the query: 1,000 tags passed SQLite's
    limit, an internal error)."""
    for flag, value in named.items():
        values = [value] if isinstance(value, str) else list(value or ())
        for v in values:
            utf8(v, "the query" if flag == "query" else f"--{flag} {v!r}")
        if len(values) > ops.MAX_LIST_ITEMS:  # repeated ones too: each is a clause
            raise InvalidInput(
                f"too many --{flag} values ({len(values)}); the limit is {ops.MAX_LIST_ITEMS}",
                f"use fewer --{flag} values")


def memory_body(
    text: str,
    *,
    kind: str,
    key: str | None,
    tags: Iterable[str],
    about: Iterable[str],
    paths: Iterable[str],
    importance: float,
    valid_from: str | int | None,
    valid_until: str | int | None,
    source: str | None,
    session: str | None,
    head: str | None,
    cwd: Path,
    root: Path,
) -> ops.MemoryBody:
    """Validate what a user wants to remember and build the op's record (paths
    are taken relative to ``cwd`` and stored relative to the work tree ``root``)."""
    if not isinstance(text, str) or not text.strip():
        raise EmptyText("memory text is empty")
    utf8(text, "memory text", "convert it to UTF-8 (e.g. with iconv) first")
    if len(text.encode("utf-8")) > ops.MAX_TEXT_BYTES:
        raise InvalidInput(
            f"memory text is {len(text.encode('utf-8'))} bytes; the limit is "
            f"{ops.MAX_TEXT_BYTES}",
            "split it into several memories",
        )
    if kind not in ops.KINDS:
        raise InvalidInput(
            f"unknown kind '{kind}'", f"use one of: {', '.join(ops.KINDS)}"
        )
    if not 0.0 <= float(importance) <= 1.0:
        raise InvalidInput(
            f"importance {importance} is out of range", "use a number from 0 to 1"
        )
    vfrom = when(valid_from, "--valid-from")
    vuntil = when(valid_until, "--valid-until")
    if vfrom is not None and vuntil is not None and vuntil < vfrom:
        raise InvalidInput("valid-until is before valid-from", "swap the two dates")
    return ops.MemoryBody(
        kind=kind,  # type: ignore[arg-type]
        text=text,
        key=key_name(key),
        tags=names((ops.folded(t) for t in tags), "tag"),
        entities=names(about, "entity"),
        importance=float(importance),
        valid_from=vfrom,
        valid_until=vuntil,
        source=field(source, "source"),
        session=field(session, "session"),
        anchors=ops.Anchors(commit=head, paths=repo_paths(paths, cwd, root)),
    )


def by_whom(value: str | None) -> str | None:
    """Provenance for ``--by``: None (or "person") for a person, or "agent:NAME"."""
    import re

    if value is None or value.strip().lower() in ("", "person", "human"):
        return None
    value = value.strip()
    if not re.match(ops.BY_PATTERN, value):
        raise InvalidInput(f"--by '{value}' is neither 'person' nor 'agent:NAME'",
                           "name the agent, e.g. --by agent:claude-code")
    return value


def repo_paths(paths: Iterable[str], cwd: Path, root: Path) -> list[str]:
    """Paths relative to the repository root, whatever directory we run in."""
    out: list[str] = []
    base: Path | None = None  # resolved on the first path (a stat per part: most have none)
    for p in paths:
        if not p or not p.strip():
            continue
        base = base or root.resolve()
        if "\0" in p:  # no file has one, and the OS refuses it with a ValueError
            _refuse(ops.line_problem(p, "path"), "path")
        full = (cwd / p).resolve()
        try:
            rel = full.relative_to(base).as_posix()
        except ValueError:
            if os.path.islink(cwd / p):  # a tracked link out of the tree: say so
                raise InvalidInput(
                    f"path '{p}' is a symbolic link to {full}, outside the repository",
                    "anchor a path inside the work tree (the link's folder, or a file "
                    "beside it)") from None
            raise InvalidInput(
                f"path '{p}' is outside the repository", "give a path inside the work tree"
            ) from None
        out.append(rel or ".")
    checked = names(out, "path")
    for p in checked:
        _refuse(ops.path_problem(p), "path")
    return checked


def leads_away(root: Path, path: Path) -> str | None:
    """Why ``path`` (its links followed) leads out of the work tree ``root`` or into
    its git dir, else None: a committed link that does either is refused, whatever
    is at its end (a file, a folder, nothing yet)."""
    real_root = Path(os.path.realpath(root))
    real = Path(os.path.realpath(path))
    if real != real_root and real_root not in real.parents:
        # Say which: the file itself, or a folder on its way (a committed .claude -> ~/.claude).
        how = "is a symlink to" if os.path.islink(path) else "leads through a linked folder to"
        return f"{path} {how} {real}, outside this repository"
    # By what the folder is, not only by its name: ".GIT" is ".git" on a disk that folds
    # case (macOS, Windows), ".git." and ".git " are on NTFS, and a git dir may sit in the
    # tree under any name (--separate-git-dir).
    if any(p.casefold().rstrip(". ") == ".git" for p in real.relative_to(real_root).parts) or any(
            (f / "HEAD").is_file() and (f / "objects").is_dir()
            for f in [real, *real.parents] if f != real_root and real_root in f.parents):
        return f"{path} leads into the repository's git directory ({real})"
    return None


def foreign_file(root: Path, path: Path) -> str | None:
    """Why ``path`` is not a file of the work tree ``root`` to read or write (an
    AGENTS.md, an agent's settings, a SKILL.md), else None. Links are followed,
    as a read or write would follow them, and a committed link is a teammate's
    choice: one out of the repository (to the user's own settings, to
    ~/.ssh/config, a folder of ~/.claude) or into its git dir (``AGENTS.md ->
    .git/config``: the block appended made every git command fail) is refused,
    as is anything there but a regular file."""
    away = leads_away(root, path)
    if away is not None:
        return away
    real = Path(os.path.realpath(path))
    if real.exists() and not real.is_file():
        return f"{path} is not a regular file"
    real_root = Path(os.path.realpath(root))
    for folder in real.parents:  # a committed file where a folder goes (.claude, .github)
        if folder == real_root:
            break
        if folder.exists() and not folder.is_dir():
            return f"{folder} is a file, where {path} needs a folder"
    return None


def check_writable(line: bytes, partition: str) -> None:
    """Refuse to write what replay would skip (limits, ranges, types, fields):
    the writer and every reader apply the very same checks. The author's name
    comes from git, not from the caller, so it meets the gate here (the other
    free fields met it in ``gating.screen`` and ``gating.screen_reason``):
    replay quarantines an op whose author name the gate refuses."""
    from ..replay import Skip, check_line
    from .gating import screen_author

    item = check_line(line, partition)
    if isinstance(item, Skip):
        raise InvalidInput(
            f"this memory cannot be stored: {item.reason}",
            "shorten or correct the offending field (see docs/data-model.md, Limits)",
        )
    screen_author(item.op.author.name)


def when(value: str | int | None, flag: str) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, int):
        return value
    try:
        return parse_date(value)[0]
    except InvalidInput as exc:
        raise type(exc)(f"{flag}: {exc.message}") from None


def _refuse(problem: str | None, what: str) -> None:
    """Raise the one-line error for a field rule of ``ops`` (the value itself is
    never echoed: it may hold the very characters that were refused)."""
    if problem is None:
        return
    if "the limit is" in problem:
        raise InvalidInput(problem, f"shorten the {what}")
    if what == "key":
        raise InvalidInput(problem, "use a short name without line breaks, control "
                           "characters or angle brackets, e.g. db.engine")
    if what == "path":
        raise InvalidInput(problem, "give a path inside the work tree")
    if what == "reason":
        raise InvalidInput(problem, "write the reason without control characters")
    raise InvalidInput(problem, f"write the {what} on one line, without control characters")


def field(value: str | None, what: str) -> str | None:
    """A single-line field (a reason may span lines): stripped, None when
    empty, refused if replay would skip it."""
    if value is None:
        return None
    value = value.strip()
    if not value:
        return None
    if what == "reason":
        _refuse(ops.lines_problem(value, what), what)
    else:
        _refuse(ops.line_problem(value, what), what)
    return value


def key_name(key: str | None) -> str | None:
    """A key names an attribute (rule: ``ops.key_problem``)."""
    k = ops.folded(key) if key is not None else None
    if not k:
        return None
    _refuse(ops.key_problem(k), "key")
    return k


def names(values: Iterable[str], what: str) -> list[str]:
    out: list[str] = []
    for v in values:
        f = field(v, what)
        if f and f not in out:
            out.append(f)
    if len(out) > ops.MAX_LIST_ITEMS:
        raise InvalidInput(
            f"too many {what} values ({len(out)}); the limit is {ops.MAX_LIST_ITEMS}",
            f"use fewer {what} values",
        )
    return out


def clip(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"

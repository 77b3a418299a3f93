"""The ``git mem`` command line: parse, make one library call, print.

Every command takes ``--json`` and then prints exactly one envelope on stdout:

    {"ok": true, "command": "recall", "version": 1, "data": ..., "warnings": [...]}
    {"ok": false, "command": "recall", "version": 1, "error": {...}, "warnings": [...]}

Errors also print one line on stderr, ``error: <message>; hint: <hint>``, and
exit with the code documented in gitmem/errors.py and docs/cli.md.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable
from typing import Any, TypeVar

import click
import msgspec

from .. import __version__, api
from ..agents import hooks
from ..errors import GitMemError
from ..model import Hit, OpInfo, Record
from ..ops import KINDS

T = TypeVar("T")
ENVELOPE_VERSION = 1

personal_option = click.option(
    "--personal", is_flag=True,
    help="Use your personal pool (outside any repository, never pushed to a team).")

json_option = click.option(
    "--json", "as_json", is_flag=True, help="Print one JSON envelope on stdout (for agents)."
)


def _emit_json(payload: dict[str, Any]) -> None:
    click.echo(msgspec.json.encode(payload).decode())


def _run(
    command: str,
    as_json: bool,
    action: Callable[[api.Store], T],
    human: Callable[[T], str | None],
    personal: bool | str = False,
) -> None:
    """Open the store, run one action, print the result or the error.

    ``personal``: True reads the personal pool; "write" also creates it and
    records the repository the command runs in (a pointer)."""
    store: api.Store | None = None
    warnings: list[str] = []
    bar = _Progress() if not as_json and _Progress.wanted() else None
    try:
        if personal == "write":
            store = api.open_personal_from()
        elif personal:
            store = api.open_personal(create=False)
        else:
            store = api.open()
        store.progress = bar
        try:
            result = action(store)
        finally:
            if bar is not None:
                bar.done()
        warnings = store.warnings
    except GitMemError as exc:
        warnings = store.warnings if store else []
        _print_warnings(warnings, as_json)
        if as_json:
            _emit_json(
                {"ok": False, "command": command, "version": ENVELOPE_VERSION,
                 "error": exc.to_dict(), "warnings": warnings}
            )
        click.echo(exc.one_line(), err=True)
        sys.exit(exc.exit_code)
    finally:
        if store is not None:
            store.close()
    _print_warnings(warnings, as_json)
    if as_json:
        _emit_json(
            {"ok": True, "command": command, "version": ENVELOPE_VERSION,
             "data": msgspec.to_builtins(result), "warnings": warnings}
        )
    else:
        text = human(result)
        if text:
            click.echo(text)


class _Progress:
    """One self-erasing status line on stderr, for long operations on a terminal.

    Drawn at most ten times a second and only after half a second, so quick
    commands never flicker; never drawn when stderr is not a terminal."""

    def __init__(self) -> None:
        import time

        self._clock = time.monotonic
        self._start = self._clock()
        try:
            self._delay = float(os.environ.get("GITMEM_PROGRESS_DELAY", "0.5") or 0.5)
        except ValueError:
            self._delay = 0.5
        self._last = 0.0
        self._shown = False

    @staticmethod
    def wanted() -> bool:
        return sys.stderr.isatty() and not os.environ.get("GITMEM_NO_PROGRESS")

    def __call__(self, what: str, done: int, total: int | None) -> None:
        now = self._clock()
        if now - self._start < self._delay or (now - self._last < 0.1 and done != total):
            return
        self._last = now
        if total:
            width = 24
            filled = int(width * min(done, total) / total)
            line = f"{what}: [{'#' * filled}{'.' * (width - filled)}] {done}/{total}"
        else:
            line = f"{what}: {done}"
        sys.stderr.write("\r\033[K" + line)
        sys.stderr.flush()
        self._shown = True

    def done(self) -> None:
        if self._shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()


def _print_warnings(warnings: list[str], as_json: bool) -> None:
    for w in warnings:
        click.echo(f"warning: {w}", err=True)


class _Group(click.Group):
    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except (click.exceptions.Exit, click.ClickException, SystemExit, click.Abort):
            raise
        except KeyboardInterrupt:
            sys.exit(130)
        except Exception as exc:  # never a traceback for users
            if os.environ.get("GITMEM_DEBUG"):
                traceback.print_exc()
            click.echo(
                f"error: internal error: {type(exc).__name__}: {exc}; hint: this is a bug; "
                "rerun with GITMEM_DEBUG=1 and report the traceback",
                err=True,
            )
            sys.exit(1)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="git-mem")
def cli() -> None:
    """A memory for coding agents that lives in this git repository.

    Memories are ops appended to refs/memory/* (one partition per author and
    clone); every read replays them into a local projection under .git/mem/.

    \b
    Example:
      git mem add "tests live in spec/, run with make spec" --kind procedure
      git mem recall "how do I run the tests"
    """


# -- add -------------------------------------------------------------------------


@cli.command()
@click.argument("text")
@click.option("--kind", type=click.Choice(KINDS), default="note", show_default=True,
              help="What sort of memory this is.")
@click.option("--key", help="Attribute name for a keyed fact (e.g. db.engine).")
@click.option("--tag", "tags", multiple=True, help="A tag (repeatable).")
@click.option("--about", "about", multiple=True, help="An entity it is about (repeatable).")
@click.option("--path", "paths", multiple=True, help="A file it is anchored to (repeatable).")
@click.option("--importance", type=float, default=0.5, show_default=True,
              help="How much it matters, 0 to 1.")
@click.option("--valid-from", help="When it became true in the world (ISO date).")
@click.option("--valid-until", help="When it stopped being true in the world (ISO date).")
@click.option("--source", help='Where it came from ("chat", "code review", an agent).')
@click.option("--session", envvar="GIT_MEM_SESSION", help="Session id [env GIT_MEM_SESSION].")
@click.option("--supersedes", "supersedes", multiple=True,
              help="Id of a memory this one replaces (repeatable).")
@click.option("--redact", is_flag=True,
              help="Store the text with detected secrets masked instead of refusing it.")
@click.option("--force", is_flag=True,
              help="Store it even if a near-duplicate of the same kind is stored.")
@personal_option
@json_option
def add(text: str, kind: str, key: str | None, tags: tuple[str, ...], about: tuple[str, ...],
        paths: tuple[str, ...], importance: float, valid_from: str | None,
        valid_until: str | None, source: str | None, session: str | None,
        supersedes: tuple[str, ...], redact: bool, force: bool, personal: bool,
        as_json: bool) -> None:
    """Add a memory (TEXT, or - to read it from stdin); prints its id.

    The same text as a current memory of the same kind adds nothing: it
    reinforces that one ("duplicate of ID"). A near-duplicate is refused
    (exit 12) unless --force; a close one is stored and listed by 'git mem
    similar'. With --key it replaces the key's current value (see 'set').

    \b
    With --personal it goes to your personal pool instead: preferences and
    habits that follow you across repositories and are never pushed to a team.

    \b
    Example:
      git mem add "tests live in spec/, run with make spec" --kind procedure --tag testing
      git mem add "I write British English" --kind persona --personal
    """
    if text == "-":
        text = click.get_binary_stream("stdin").read().decode("utf-8", errors="surrogateescape")
    _run(
        "add", as_json,
        lambda s: s.add(text, kind=kind, key=key, tags=tags, about=about,
                        paths=() if personal else paths,
                        importance=importance, valid_from=valid_from,
                        valid_until=valid_until, source=source, session=session,
                        supersedes=supersedes, redact=redact, force=force),
        _render_added, personal="write" if personal else False,
    )


def _render_added(r: api.Added) -> str:
    """The id alone on stdout (scripts capture it); what else happened on stderr."""
    if r.duplicate_of:
        click.echo(f"note: duplicate of {r.id[:12]}: reinforced it, nothing new stored", err=True)
    if r.superseded:
        click.echo("note: supersedes " + ", ".join(x[:12] for x in r.superseded), err=True)
    for s in r.similar:
        click.echo(f"note: similar to {str(s['id'])[:12]} (cosine {s['cosine']:.3f}); "
                   "review with 'git mem similar'", err=True)
    return r.id[:12]


# -- context -------------------------------------------------------------------------


@cli.command()
@click.option("--budget", type=int, default=500, show_default=True,
              help="Most tokens to print (estimated as characters / 4).")
@click.option("--format", "fmt", type=click.Choice(["md"]), default="md", show_default=True,
              help="Output format without --json: Markdown.")
@click.option("--personal", is_flag=True,
              help="Only your personal pool (also works outside any repository).")
@json_option
def context(budget: int, fmt: str, personal: bool, as_json: bool) -> None:
    """Print the memory profile an agent should read first, within a budget.

    Persona, current keyed facts, procedures and conventions, the most salient
    notes and what changed lately; your personal pool's memories come first in
    each section, marked [personal]. Memory text sits between git-mem-context
    tags, as data. The same log and clock give the same output.

    \b
    Example:
      git mem context --budget 800
    """
    _run("context", as_json, lambda s: s.context(budget=budget),
         lambda r: r.markdown.rstrip("\n") or "(no memories yet)", personal=personal)


# -- keyed facts --------------------------------------------------------------------

as_of_option = click.option(
    "--as-of", "as_of", metavar="WHEN",
    help="What the log believed then: a date, datetime or git revision (tag, commit).")
valid_at_option = click.option(
    "--valid-at", "valid_at", metavar="WHEN",
    help="What was true in the world then: a date, datetime or git revision.")


@cli.command(name="set")
@click.argument("key")
@click.argument("value")
@click.option("--kind", type=click.Choice(KINDS), default="fact", show_default=True,
              help="What sort of memory this is.")
@click.option("--tag", "tags", multiple=True, help="A tag (repeatable).")
@click.option("--about", "about", multiple=True, help="An entity it is about (repeatable).")
@click.option("--importance", type=float, default=0.5, show_default=True,
              help="How much it matters, 0 to 1.")
@click.option("--valid-from", help="When it became true in the world (default: now).")
@click.option("--valid-until", help="When it stops being true in the world.")
@click.option("--source", help='Where it came from ("chat", "code review", an agent).')
@click.option("--session", envvar="GIT_MEM_SESSION", help="Session id [env GIT_MEM_SESSION].")
@click.option("--redact", is_flag=True,
              help="Store the value with detected secrets masked instead of refusing it.")
@personal_option
@json_option
def set_(key: str, value: str, kind: str, tags: tuple[str, ...], about: tuple[str, ...],
         importance: float, valid_from: str | None, valid_until: str | None,
         source: str | None, session: str | None, redact: bool, personal: bool,
         as_json: bool) -> None:
    """Set KEY to VALUE (or - to read it from stdin): a keyed fact that supersedes
    the key's current value.

    The old value keeps its place in 'git mem history KEY'; setting the value
    the key already has only reinforces it; two concurrent sets converge to one
    winner on every clone and the other stays listed by 'git mem conflicts'.

    \b
    Example:
      git mem set db.engine cockroachdb --valid-from 2026-03-01
    """
    if value == "-":
        value = click.get_binary_stream("stdin").read().decode("utf-8", errors="surrogateescape")
    _run("set", as_json,
         lambda s: s.set(key, value, kind=kind, tags=tags, about=about, importance=importance,
                         valid_from=valid_from, valid_until=valid_until, source=source,
                         session=session, redact=redact),
         _render_added, personal="write" if personal else False)


@cli.command()
@click.argument("key")
@as_of_option
@valid_at_option
@personal_option
@json_option
def get(key: str, as_of: str | None, valid_at: str | None, personal: bool,
        as_json: bool) -> None:
    """Print the value of KEY: current, or at a point of either timeline.

    Exit 5 when the key has no value then. A conflict (values set
    concurrently) prints the winner and lists the others.

    \b
    Example:
      git mem get db.engine --as-of v1.4
    """
    _run("get", as_json, lambda s: s.get(key, as_of=as_of, valid_at=valid_at), _render_value,
         personal=personal)


def _render_value(v: api.FactValue) -> str:
    out = [v.value]
    for c in v.conflicts:
        out.append(f"conflict: {c.key} = {_clip_line(c.text)} ({c.id[:12]}, {c.author}, "
                   f"{c.recorded_at[:10]}); set the key again to resolve it")
    return "\n".join(out)


def _clip_line(text: str | None, n: int = 70) -> str:
    first = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return first if len(first) <= n else first[: n - 1] + "…"


@cli.command()
@as_of_option
@valid_at_option
@personal_option
@json_option
def keys(as_of: str | None, valid_at: str | None, personal: bool, as_json: bool) -> None:
    """List every key with its value (current, or at a point of either timeline).

    \b
    Example:
      git mem keys --valid-at 2026-01-01
    """
    _run("keys", as_json, lambda s: {"keys": s.keys(as_of=as_of, valid_at=valid_at)},
         lambda r: "\n".join(
             f"{v.key} = {_clip_line(v.value)}" + ("  [conflict]" if v.conflicts else "")
             for v in r["keys"]), personal=personal)  # type: ignore[index]


@cli.command()
@click.argument("key")
@personal_option
@json_option
def history(key: str, personal: bool, as_json: bool) -> None:
    """List every value KEY has had, oldest first, with who set it and when.

    \b
    Example:
      git mem history db.engine
    """
    _run("history", as_json, lambda s: s.history(key), _render_history, personal=personal)


def _render_history(h: api.KeyHistory) -> str:
    out = []
    for r in h.values:
        if r.id == h.current:
            state = "current"
        elif r.id in h.conflicts:
            state = f"conflict (loses to {(r.conflict_with or '')[:12]})"
        elif r.status == "active":
            state = "quarantined" if r.quarantine else "active"
        else:
            state = f"{r.status} {(r.retired_at or '')[:19]}"
            state += f" ({r.retired_reason})" if r.retired_reason else ""
        valid = f"  valid {r.valid_from[:10]}.." if r.valid_from else ""
        out.append(f"{r.recorded_at}  {r.id[:12]}  {r.author:<16} {_clip_line(r.text, 40):<40}"
                   f"  {state}{valid}")
    return "\n".join(out)


@cli.command()
@json_option
def conflicts(as_json: bool) -> None:
    """List keys with concurrent values (set on two clones before they synced).

    Every clone shows the same winner (the later op in the log's order); the
    others stay listed here until someone sets the key again.

    \b
    Example:
      git mem conflicts
    """
    def render(r: dict[str, list[api.Conflict]]) -> str:
        out = []
        for c in r["conflicts"]:
            out.append(f"{c.key}: {_clip_line(c.current.text)} ({c.current.id[:12]}, "
                       f"{c.current.author}) wins over")
            out.extend(f"    {_clip_line(o.text)} ({o.id[:12]}, {o.author}, {o.recorded_at[:10]})"
                       for o in c.others)
        return "\n".join(out) if out else "no conflicts"

    _run("conflicts", as_json, lambda s: {"conflicts": s.conflicts()}, render)


@cli.command()
@click.argument("memory_id", metavar="ID")
@click.option("--reason", help="Why (e.g. 'checked against the code today').")
@json_option
def confirm(memory_id: str, reason: str | None, as_json: bool) -> None:
    """Confirm a memory still holds: reinforces it (salience) for every clone.

    \b
    Example:
      git mem confirm 3f2a9c1
    """
    _run("confirm", as_json, lambda s: s.confirm(memory_id, reason),
         lambda r: f"confirmed {r.target[:12]} ({r.confirms} confirmation"
                   f"{'s' if r.confirms != 1 else ''})")


@cli.command()
@click.argument("memory_id", metavar="ID", required=False)
@click.option("--since", metavar="WHEN", help="Only pairs with a memory recorded since WHEN.")
@click.option("--kind", "kinds", type=click.Choice(KINDS), multiple=True,
              help="Only this kind (repeatable).")
@click.option("--limit", type=int, default=50, show_default=True, help="How many pairs.")
@json_option
def similar(memory_id: str | None, since: str | None, kinds: tuple[str, ...], limit: int,
            as_json: bool) -> None:
    """List pairs of current memories close in meaning, for review (or those of ID).

    Merge them with 'add --supersedes', retire one with 'invalidate', or keep
    both. Pairs at or above gitmem.duplicateThreshold were stored with --force.

    \b
    Example:
      git mem similar --since "2 weeks ago"
    """
    def render(r: dict[str, list[api.SimilarPair]]) -> str:
        out = []
        for p in r["pairs"]:
            mark = "  near-duplicate" if p.near_duplicate else ""
            out.append(f"{p.cosine:.3f}  {p.older.kind}{mark}")
            for m in (p.older, p.newer):
                out.append(f"    {m.id[:12]}  {m.recorded_at[:10]}  {_clip_line(m.text)}")
        return "\n".join(out) if out else "no similar memories"

    _run("similar", as_json,
         lambda s: {"pairs": s.similar(memory_id, since=since, limit=limit, kinds=kinds)},
         render)


@cli.command(name="import")
@click.argument("file", type=click.File("rb"))
@click.option("--pack-size", type=int, default=5000, show_default=True,
              help="Memories per commit.")
@click.option("--redact", is_flag=True,
              help="Mask detected secrets instead of refusing the whole import.")
@json_option
def import_(file: Any, pack_size: int, redact: bool, as_json: bool) -> None:
    """Bulk-add memories from a JSON-lines FILE (- for stdin), many per commit.

    Each line is an object with the options of 'add': {"text": "...", "kind":
    "fact", "key": ..., "tags": [...], "about": [...], "paths": [...],
    "importance": 0.5, "valid_from": ..., "valid_until": ..., "source": ...,
    "session": ..., "recorded_at": ...}. All lines are checked before anything
    is written.

    \b
    Example:
      git mem import notes.jsonl
    """
    _run("import", as_json, lambda s: s.import_records(file, pack_size=pack_size, redact=redact),
         lambda r: f"imported {r.count} memories in {len(r.commits)} commit(s)"
                   + (f"; {len(r.duplicates)} duplicate line(s) not added (existing memories "
                      "reinforced)" if r.duplicates else ""))


# -- recall ----------------------------------------------------------------------


@cli.command()
@click.argument("query")
@click.option("-k", "--limit", "k", type=int, default=10, show_default=True,
              help="How many results.")
@click.option("--kind", "kinds", type=click.Choice(KINDS), multiple=True,
              help="Only this kind (repeatable: any of them).")
@click.option("--tag", "tags", multiple=True, help="Only memories with this tag (repeatable: all).")
@click.option("--all", "include_retired", is_flag=True,
              help="Include invalidated and superseded memories (marked).")
@click.option("--mode", type=click.Choice(["hybrid", "lexical", "vector"]), default="hybrid",
              show_default=True, help="Which channels rank: both fused, or one alone.")
@click.option("--explain", is_flag=True,
              help="Show each result's rank per channel and every factor of its score.")
@click.option("--quarantined", "include_quarantined", is_flag=True,
              help="Include memories the write gate would refuse (marked).")
@as_of_option
@valid_at_option
@click.option("--personal", is_flag=True,
              help="Search only your personal pool (also works outside any repository).")
@json_option
def recall(query: str, k: int, kinds: tuple[str, ...], tags: tuple[str, ...],
           include_retired: bool, mode: str, explain: bool, include_quarantined: bool,
           as_of: str | None, valid_at: str | None, personal: bool, as_json: bool) -> None:
    """Find the memories that answer QUERY, best first.

    Only current truth by default: --all adds retired memories, losing values
    of keyed conflicts and faded ones (salience below gitmem.salienceFloor),
    each marked. --as-of and --valid-at query the past (docs/time.md). Your
    personal pool, if you have one, is searched too: its hits are marked
    [personal] and come first among equals.

    \b
    Example:
      git mem recall "how do I run the tests" -k 5 --json
      git mem recall "which database" --as-of v1.4
    """
    _run(
        "recall", as_json,
        lambda s: {"query": query, "results": s.recall(query, k=k, kinds=kinds, tags=tags,
                                                      include_retired=include_retired,
                                                      mode=mode, explain=explain,
                                                      include_quarantined=include_quarantined,
                                                      as_of=as_of, valid_at=valid_at)},
        lambda r: "\n".join(_hit_lines(h) for h in r["results"]),  # type: ignore[index]
        personal=personal,
    )


def _hit_lines(h: Hit) -> str:
    head = f"{h.id[:12]}  {h.kind:<9} {h.score:7.3f}  {h.author}  {h.recorded_at[:10]}"
    if h.key:
        head += f"  key={h.key}"
    if h.tags:
        head += "  #" + " #".join(h.tags)
    if h.status != "active":
        head += f"  [{h.status} {(h.retired_at or '')[:10]}"
        head += f": {h.retired_reason}]" if h.retired_reason else "]"
    if h.pool != "project":
        head += f"  [{h.pool}]"
    if h.conflict_with:
        head += f"  [conflict: loses to {h.conflict_with[:12]}]"
    if h.faded:
        head += f"  [faded: salience {h.salience:.3f}]"
    if h.quarantine:
        head += f"  [quarantined: {h.quarantine}]"
    out = head + "\n" + _block(h.text or "")
    if h.explain:
        e = h.explain
        ranks = ", ".join(f"{c} #{r} ({e['raw'][c]:.4g})" for c, r in e["ranks"].items())  # type: ignore[index, union-attr]
        factors = " x ".join(f"{k} {v:.3f}" for k, v in e["factors"].items())  # type: ignore[union-attr]
        sig = e.get("signals") or {}
        if sig:
            factors += (f" (age {sig['age_days']:.1f} d, {sig['confirms']} confirmation(s), "  # type: ignore[index]
                        f"{sig['uses']} use(s))")  # type: ignore[index]
        out += f"\n    ~ {ranks}; rrf {e['rrf']:.5f} x {factors} = {e['final']:.5f}"
    return out


def _block(text: str) -> str:
    """Memory text as an indented block: data, never mistaken for our output."""
    return "\n".join("    " + line for line in (text.splitlines() or [""]))


# -- show / log ------------------------------------------------------------------


@cli.command()
@click.argument("memory_id", metavar="ID")
@json_option
def show(memory_id: str, as_json: bool) -> None:
    """Show a memory: the whole record, its provenance and every op on it.

    \b
    Example:
      git mem show 3f2a9c1
    """
    _run("show", as_json, lambda s: s.show(memory_id), _render_show)


def _render_show(r: api.Shown) -> str:
    m: Record = r.memory
    rows = [
        ("id", m.id), ("kind", m.kind), ("status", m.status), ("key", m.key),
        ("tags", ", ".join(m.tags)), ("about", ", ".join(m.entities)),
        ("importance", f"{m.importance:g}"), ("valid from", m.valid_from),
        ("valid until", m.valid_until), ("source", m.source), ("session", m.session),
        ("author", f"{m.author} <{m.author_email}>"), ("recorded", m.recorded_at),
        ("partition", m.partition), ("commit", m.commit), ("clock", str(m.clock)),
        ("head", m.anchors.commit), ("paths", ", ".join(m.anchors.paths)),
        ("supersedes", ", ".join(x[:12] for x in m.supersedes)),
        ("retired", f"{m.retired_at} by {(m.retired_by or '')[:12]}" if m.retired_by else None),
        ("reason", m.retired_reason),
        ("quarantine", m.quarantine),
        ("conflict", f"loses to {m.conflict_with[:12]}" if m.conflict_with else None),
    ]
    out = [f"{k + ':':<12} {v}" for k, v in rows if v]
    out.append("text:")
    out.append(_block(m.text) if m.text is not None else "    (forgotten)")
    out.append("ops:")
    out.extend("    " + _op_line(o) for o in r.ops)
    return "\n".join(out)


def _op_line(o: OpInfo) -> str:
    what = o.summary if o.type == "add" else (o.target or "")[:12]
    if o.type == "add" and o.summary is None:
        what = "(forgotten)"
    if o.reason:
        what += f" ({o.reason})"
    return f"{o.id[:12]}  {o.recorded_at}  {o.type:<10} {o.author}  {what}"


@cli.command()
@click.option("-n", "--max-count", "limit", type=int, help="Show only the last N ops.")
@click.option("--author", help="Only ops whose author name or email contains this.")
@json_option
def log(limit: int | None, author: str | None, as_json: bool) -> None:
    """List ops in replay order (clock, then id): the history of the memory.

    \b
    Example:
      git mem log -n 20 --author alice
    """
    _run(
        "log", as_json,
        lambda s: {"ops": s.log_ops(limit, author)},
        lambda r: "\n".join(_op_line(o) for o in r["ops"]),  # type: ignore[index]
    )


# -- invalidate / forget ------------------------------------------------------------


@cli.command()
@click.argument("memory_id", metavar="ID")
@click.option("--reason", help="Why it is no longer true.")
@json_option
def invalidate(memory_id: str, reason: str | None, as_json: bool) -> None:
    """Retire a memory: it leaves recall (see it with --all) but stays in history.

    \b
    Example:
      git mem invalidate 3f2a9c1 --reason "we moved to CockroachDB"
    """
    _run("invalidate", as_json, lambda s: s.invalidate(memory_id, reason),
         lambda r: f"invalidated {r.target[:12]}" if r.changed else None)


@cli.command()
@click.argument("memory_id", metavar="ID")
@click.option("--reason", help="Why (stored in the tombstone; keep secrets out of it).")
@click.option("--purge", is_flag=True,
              help="Also rewrite your partition so the text is gone from the git log.")
@click.option("--dry-run", is_flag=True, help="With --purge: show what would change, write nothing.")
@json_option
def forget(memory_id: str, reason: str | None, purge: bool, dry_run: bool,
           as_json: bool) -> None:
    """Forget a memory: a tombstone op; no clone returns its content once synced.

    With --purge (only in the clone that wrote the memory), this clone's
    partition is also rewritten without it, and the next 'git mem push' or
    'sync' replaces that one ref on the remote (force-with-lease). Clones
    that already fetched it keep the bytes until they sync (docs/sync.md).

    \b
    Example:
      git mem forget 3f2a9c1 --purge --dry-run
    """
    _run("forget", as_json,
         lambda s: s.forget(memory_id, reason, purge=purge, dry_run=dry_run), _render_forget)


def _render_forget(r: api.Retired) -> str | None:
    p = r.purge
    if p is None:
        return f"forgot {r.target[:12]}" if r.changed else None
    would = "would " if p.dry_run else ""
    out = ["dry run: nothing written"] if p.dry_run else []
    if p.tombstone:
        out.append(f"{'would forget' if p.dry_run else 'forgot'} {r.target[:12]}")
    out.append(f"{'would purge' if p.dry_run else 'purged'} {r.target[:12]} from "
               f"refs/memory/{p.partition}: "
               f"{len(p.ops_removed)} op(s) removed, {len(p.commits_rewritten)} commit(s) "
               f"rewritten, {len(p.commits_dropped)} dropped")
    out.extend(f"{would}rewrite backup {b}" for b in p.backups)
    for c in p.remotes:
        held = "holds it" if c.has_content else "does not hold it"
        out.append(f"{c.remote} {held}; next 'git mem push' or 'sync': {c.next_push}")
    return "\n".join(out)


# -- status / rebuild ------------------------------------------------------------


@cli.command()
@personal_option
@json_option
def status(personal: bool, as_json: bool) -> None:
    """Show partitions, op and memory counts, and the projection's state.

    \b
    Example:
      git mem status --json
    """
    _run("status", as_json, lambda s: s.status(), _render_status, personal=personal)


def _render_status(st: api.Status) -> str:
    out = [f"repository: {st.repository}", f"your partition: {st.partition or '(no identity)'}"]
    out.append(f"partitions: {len(st.partitions)}")
    for p in st.partitions:
        mark = "*" if p.mine else " "
        out.append(f"  {mark} {p.name}  {p.ops} ops  {p.tip[:12]}  {', '.join(p.authors)}")
    ops_txt = ", ".join(f"{k} {v}" for k, v in sorted(st.ops.items()) if k != "total")
    mem_txt = ", ".join(f"{k} {v}" for k, v in sorted(st.memories.items()) if k != "total")
    out.append(f"ops: {st.ops.get('total', 0)}" + (f" ({ops_txt})" if ops_txt else ""))
    out.append(f"memories: {st.memories.get('total', 0)}" + (f" ({mem_txt})" if mem_txt else ""))
    proj = st.projection
    out.append(
        f"projection: {proj['path']} (schema {proj['schema']}, {proj['size_bytes']} bytes, "
        "up to date)"
    )
    if st.skipped:
        out.append(f"skipped ops: {len(st.skipped)}")
        for s in st.skipped:
            out.append(f"  {s.partition} {s.commit[:12]} line {s.line}: {s.reason}")
    return "\n".join(out)


@cli.command()
@json_option
def rebuild(as_json: bool) -> None:
    """Drop the projection's content and replay every partition from the op-log.

    \b
    Example:
      git mem rebuild
    """
    _run(
        "rebuild", as_json, lambda s: s.rebuild(),
        lambda r: f"rebuilt: {r.ops_applied} ops from {r.partitions_changed} partition(s)"
        + (f", {r.ops_skipped} skipped" if r.ops_skipped else "")
        + f" in {r.seconds:.2f}s",
    )


# -- sync -------------------------------------------------------------------------


def _render_sync(r: api.SyncReport) -> str:
    out = []
    if r.fetched:
        parts = [f"{len(r.created)} new", f"{len(r.fast_forwarded)} updated"]
        if r.replaced:
            parts.append(f"{len(r.replaced)} replaced (rewritten by their owner)")
        applied = r.refresh.ops_applied if r.refresh else 0
        out.append(f"pulled from {r.remote}: partitions {', '.join(parts)}; "
                   f"{applied} ops replayed")
    for p in r.pushed:
        out.append(f"pushed to {r.remote}: {p['partition']} ({p['status']})")
    if not r.fetched and not r.pushed:
        out.append(f"nothing to push to {r.remote}: this clone has written no memory yet")
    return "\n".join(out)


remote_arg = click.argument("remote", required=False)


@cli.command()
@remote_arg
@personal_option
@json_option
def pull(remote: str | None, personal: bool, as_json: bool) -> None:
    """Fetch every partition from REMOTE and bring others' partitions forward.

    REMOTE defaults to the current branch's upstream remote, else origin.
    Partitions land in refs/memory-remotes/<remote>/ first; local refs move only
    when it is safe (fast-forward, or a rewrite by the partition's owner). This
    clone's own partition is never overwritten.

    \b
    Example:
      git mem pull origin
    """
    _run("pull", as_json, lambda s: s.pull(remote), _render_sync, personal=personal)


@cli.command()
@remote_arg
@personal_option
@json_option
def push(remote: str | None, personal: bool, as_json: bool) -> None:
    """Push this clone's own partitions to REMOTE: fast-forward only.

    Only refs/memory/<your partition> is pushed, separately from code; what a
    plain 'git push' does is unchanged. After 'git mem forget --purge', the
    rewritten partition replaces the remote's copy with a lease (only if the
    remote has not moved since this clone last fetched it).

    \b
    Example:
      git mem push origin
    """
    _run("push", as_json, lambda s: s.push(remote), _render_sync, personal=personal)


@cli.command()
@remote_arg
@personal_option
@json_option
def sync(remote: str | None, personal: bool, as_json: bool) -> None:
    """Pull, then push: share this clone's memory and receive everyone else's.

    With --personal: your personal pool with its own remote (a private one you
    add with 'git -C "$(git mem status --personal --json | jq -r .data.repository)"
    remote add origin URL'); it never goes to a project's remote.

    \b
    Example:
      git mem sync
    """
    _run("sync", as_json, lambda s: s.sync(remote), _render_sync, personal=personal)


@cli.command()
@click.option("--fetch-refspec", is_flag=True,
              help="Also make a plain 'git fetch' bring memory (into refs/memory-remotes/).")
@click.option("--remote", help="The remote for --fetch-refspec (default: as git fetch).")
@json_option
def init(fetch_refspec: bool, remote: str | None, as_json: bool) -> None:
    """Optional one-time set-up of this clone; safe to run again.

    Creates this clone's partition id. With --fetch-refspec, adds
    '+refs/memory/*:refs/memory-remotes/<remote>/*' to the remote's fetch
    refspecs, so a plain 'git fetch' also brings memory; what 'git push' and
    'git pull' do to code is unchanged.

    \b
    Example:
      git mem init --fetch-refspec
    """

    def render(r: api.InitReport) -> str:
        out = [f"clone id: {r.clone_id}", f"partition: {r.partition or '(no identity yet)'}"]
        for name, added in r.fetch_refspecs_added.items():
            out.append(f"fetch refspec for {name}: {'added' if added else 'already present'}")
        return "\n".join(out)

    _run("init", as_json, lambda s: s.init(fetch_refspec=fetch_refspec, remote=remote), render)


@cli.command()
@json_option
def rekey(as_json: bool) -> None:
    """Give this clone a new partition id (fixes a partition conflict).

    Use it when 'git mem pull' reports that a remote holds commits on this
    clone's partition (the same .git copied to two places). Ops that only this
    clone has move to the new partition; the old tip is kept under
    refs/memory-backup/, so nothing is lost.

    \b
    Example:
      git mem rekey && git mem sync
    """
    _run("rekey", as_json, lambda s: s.rekey(),
         lambda r: f"new clone id {r.new_clone_id} (was {r.old_clone_id}); "
                   f"moved {r.moved_ops} op(s)")


# -- agents: MCP server, hooks, AGENTS.md, completion --------------------------------


def _emit(command: str, as_json: bool, data: Any, human: str) -> None:
    """Print the result of a command that needs no repository."""
    if as_json:
        _emit_json({"ok": True, "command": command, "version": ENVELOPE_VERSION,
                    "data": msgspec.to_builtins(data), "warnings": []})
    else:
        click.echo(human, nl=not human.endswith("\n"))


@cli.command(name="mcp")
def mcp_() -> None:
    """Serve this repository's memory to an agent over MCP, on stdin/stdout.

    Tools: add, recall, context, set, get, invalidate and show, with the same
    write gate, validation and errors as the commands (an error is a tool
    error carrying code, message and hint). The server keeps the projection
    open and sees memories other processes add. Run it from the work tree (or
    'git -C PATH mem mcp'); see docs/agents.md.

    \b
    Example:
      claude mcp add git-mem -- git mem mcp
    """
    from ..agents import mcp  # the SDK is imported here only: other commands stay fast

    sys.exit(mcp.serve())


agent_option = click.option("--agent", type=click.Choice(hooks.AGENTS), default="claude-code",
                            show_default=True, help="Which agent's settings to change.")


def _render_hooks(r: hooks.HooksReport) -> str:
    events = f" ({', '.join(r.events)})" if r.events else ""
    return f"{r.status}: {r.path}{events}"


@cli.group(name="hooks", cls=_Group)
def hooks_() -> None:
    """Install or remove an agent's lifecycle hooks that call git mem.

    For Claude Code, the repository's .claude/settings.json gets two hooks:
    at session start the memory briefing ('git mem hook session-start'), on
    each prompt the few memories that match it ('git mem hook user-prompt').
    Other settings and hooks are kept.

    \b
    Example:
      git mem hooks install
    """


@hooks_.command(name="install")
@agent_option
@json_option
def hooks_install(agent: str, as_json: bool) -> None:
    """Add git mem's hooks to the agent's settings in this work tree (idempotent).

    Merges with what is there; run it again and nothing changes. An existing
    settings file that is not valid JSON is left untouched (exit 2).

    \b
    Example:
      git mem hooks install --agent claude-code
    """
    _run("hooks install", as_json, lambda s: hooks.install(s.log.workdir, agent), _render_hooks)


@hooks_.command(name="uninstall")
@agent_option
@json_option
def hooks_uninstall(agent: str, as_json: bool) -> None:
    """Remove exactly git mem's hooks from the agent's settings; keep the rest.

    \b
    Example:
      git mem hooks uninstall
    """
    _run("hooks uninstall", as_json, lambda s: hooks.uninstall(s.log.workdir, agent),
         _render_hooks)


@cli.group(name="hook", cls=_Group)
def hook_() -> None:
    """Run one agent hook: read the agent's JSON on stdin, print what it expects.

    Installed by 'git mem hooks install'; you do not run these by hand. They
    never block the agent: on any error they print nothing on stdout, one
    line on stderr, and exit 0.

    \b
    Example:
      echo '{"cwd": ".", "prompt": "how do I run the tests"}' | git mem hook user-prompt
    """


def _hook(event: str, answer: Callable[[dict[str, Any]], str | None]) -> None:
    """Read the payload, answer it; print the agent's JSON or nothing. Always exit 0."""
    try:
        payload = hooks.parse_payload(click.get_binary_stream("stdin").read())
        context = answer(payload)
        if context:
            _emit_json(hooks.output(event, context))
    except Exception as exc:  # never block the user's session
        what = exc.one_line() if isinstance(exc, GitMemError) else f"{type(exc).__name__}: {exc}"
        click.echo(f"git mem hook: skipped ({what})", err=True)
    sys.exit(0)


def _hook_store(payload: dict[str, Any]) -> api.Store:
    cwd = payload.get("cwd")
    return api.open(cwd if isinstance(cwd, str) and cwd else None)


@hook_.command(name="session-start")
@click.option("--budget", type=click.IntRange(min=1), default=500, show_default=True,
              help="Size of the briefing, in tokens.")
def hook_session_start(budget: int) -> None:
    """SessionStart: add the memory briefing ('git mem context') to the session.

    \b
    Example:
      echo '{"cwd": ".", "source": "startup"}' | git mem hook session-start
    """

    def answer(payload: dict[str, Any]) -> str | None:
        with _hook_store(payload) as store:
            return hooks.session_context(store.context(budget=budget).markdown)

    _hook("SessionStart", answer)


PROMPT_QUERY_CHARS = 2000


@hook_.command(name="user-prompt")
@click.option("-k", "--limit", "k", type=click.IntRange(1, hooks.PROMPT_K_MAX), default=3,
              show_default=True, help="At most this many memories.")
def hook_user_prompt(k: int) -> None:
    """UserPromptSubmit: add the memories that match the prompt; silent when none do.

    \b
    Example:
      echo '{"cwd": ".", "prompt": "how do I run the tests"}' | git mem hook user-prompt
    """

    def answer(payload: dict[str, Any]) -> str | None:
        prompt = payload.get("prompt")
        if not isinstance(prompt, str) or not prompt.strip():
            return None
        prompt = prompt[:PROMPT_QUERY_CHARS]  # a pasted log must not stall the prompt
        with _hook_store(payload) as store:
            hits = hooks.relevant(store.recall(prompt, k=k, explain=True, record_use=False))
            store.record_use(hits)  # only what is actually put before the agent
        return hooks.prompt_context(hits)

    _hook("UserPromptSubmit", answer)


@cli.command(name="agents-md")
@json_option
def agents_md(as_json: bool) -> None:
    """Print a short block for AGENTS.md or CLAUDE.md: how an agent uses git mem.

    \b
    Example:
      git mem agents-md >> AGENTS.md
    """
    _emit("agents-md", as_json, {"markdown": hooks.AGENTS_MD}, hooks.AGENTS_MD)


COMPLETE_VAR = "_GIT_MEM_COMPLETE"

# git's own bash completion calls _git_<command> for 'git <command>'; this one
# hands 'git mem ...' to the git-mem completion above (words/cword are git's).
_GIT_MEM_BASH = """
_git_mem ()
{
    local i start=1 IFS=$'\\n' response completion type value
    for ((i=1; i < cword; i++)); do
        if [[ "${words[i]}" == mem ]]; then start=$i; break; fi
    done
    response=$(env COMP_WORDS="git-mem ${words[*]:start+1}" \\
        COMP_CWORD=$((cword - start)) %(var)s=bash_complete git-mem)
    COMPREPLY=()
    for completion in $response; do
        IFS=',' read type value <<< "$completion"
        if [[ $type == 'plain' ]]; then
            COMPREPLY+=("$value")
        elif [[ $type == 'file' || $type == 'dir' ]]; then
            COMPREPLY=()
            compopt -o default 2>/dev/null
        fi
    done
}
""" % {"var": COMPLETE_VAR}


@cli.command(name="completion")
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]), default="bash")
@json_option
def completion(shell: str, as_json: bool) -> None:
    """Print the shell completion script for git-mem (and, in bash, for 'git mem').

    Load it from your shell's startup file. In bash it also defines _git_mem,
    which git's own completion calls, so 'git mem <TAB>' completes too.

    \b
    Example:
      eval "$(git mem completion bash)"          # in ~/.bashrc
      git mem completion fish > ~/.config/fish/completions/git-mem.fish
    """
    from click.shell_completion import get_completion_class

    cls = get_completion_class(shell)
    assert cls is not None
    script = cls(cli, {}, "git-mem", COMPLETE_VAR).source()
    if shell == "bash":
        script += _GIT_MEM_BASH
    _emit("completion", as_json, {"shell": shell, "script": script}, script)


def main() -> None:
    cli(prog_name="git mem", complete_var=COMPLETE_VAR)


if __name__ == "__main__":
    main()

"""Commands on keyed facts: set, get, keys, history, conflicts, and confirm."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from ..ops import KINDS
from . import render
from .app import (
    KindChoice,
    as_of_option,
    by_option,
    cli,
    json_option,
    personal_option,
    read_stdin,
    who,
    run,
    valid_at_option,
)

if TYPE_CHECKING:
    from .. import api


@cli.command(name="set")
@click.argument("key")
@click.argument("value")
@click.option("--kind", type=KindChoice(KINDS), default="fact", show_default=True,
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
        value = read_stdin("set", as_json, "value")
    run("set", as_json,
        lambda s: s.set(key, value, kind=kind, tags=tags, about=about, importance=importance,
                        valid_from=valid_from, valid_until=valid_until, source=source,
                        session=session, redact=redact),
        render.added, personal="write" if personal else False)


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
    run("get", as_json, lambda s: s.get(key, as_of=as_of, valid_at=valid_at), render.value,
        personal=personal)


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
    run("keys", as_json, lambda s: render.Keys(keys=s.keys(as_of=as_of, valid_at=valid_at)),
        render.keys, personal=personal)


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
    run("history", as_json, lambda s: s.history(key), render.history, personal=personal)


@cli.command()
@json_option
def conflicts(as_json: bool) -> None:
    """List keys with concurrent values (set on two clones before they synced), and
    memories replaced twice at once (--supersedes on two clones before they synced).

    Every clone shows the same winner (the later op in the log's order); the
    others stay listed here until someone sets the key again. Both replacements
    of a fork are current until one more memory supersedes both.

    \b
    Example:
      git mem conflicts
    """
    def both(s: api.Store) -> render.Conflicts:
        out = render.Conflicts(conflicts=s.conflicts())
        forks = s.forks()
        if forks:
            out["forks"] = forks
        return out

    run("conflicts", as_json, both, render.conflicts)


@cli.command()
@click.argument("memory_id", metavar="ID")
@click.option("--reason", help="Why (e.g. 'checked against the code today').")
@click.option("--worked", "outcome", flag_value="worked",
              help="A procedure: it was followed and worked (git mem skills counts these).")
@click.option("--failed", "outcome", flag_value="failed",
              help="A procedure: it was followed and failed (reinforces nothing).")
@by_option
@json_option
def confirm(memory_id: str, reason: str | None, outcome: str | None, by: str | None,
            as_json: bool) -> None:
    """Confirm a memory still holds: reinforces it (salience) for every clone.

    For a memory whose anchored code changed since (see 'git mem stale'), it
    also re-anchors the memory at the code as it is now.

    \b
    Example:
      git mem confirm 3f2a9c1
      git mem confirm 3f2a9c1 --worked
    """
    run("confirm", as_json, lambda s: s.confirm(memory_id, reason, outcome=outcome, by=who(by)),
        render.confirmed)

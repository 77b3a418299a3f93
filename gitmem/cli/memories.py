"""Commands that write or inspect single memories: add, import, show, log,
invalidate, forget."""

from __future__ import annotations

from typing import IO, Any

import click

from ..ops import KINDS
from . import actions, render
from .app import KindChoice, by_option, cli, json_option, personal_option, read_stdin, run


@cli.command()
@click.argument("text")
@click.option("--kind", type=KindChoice(KINDS), default=None,
              help="What sort of memory this is. A decision, convention or gotcha is a "
                   "note with a tag: --tag decision (export reads #decision, #convention). "
                   "[default: fact with --key, else note]")
@click.option("--key", help="Attribute name for a keyed fact (e.g. db.engine).")
@click.option("--tag", "tags", multiple=True, help="A tag (repeatable).")
@click.option("--about", "about", multiple=True, help="An entity it is about (repeatable).")
@click.option("--path", "paths", multiple=True, metavar="PATH",
              help="Code it is about: a file, a folder or FILE:START-END (repeatable); "
                   "what it holds at HEAD is recorded, so reads say when it changes.")
@click.option("--symbol", metavar="NAME", help="The function or class in --path it is about.")
@click.option("--no-anchor", "no_anchor", is_flag=True,
              help="Do not anchor the paths the text names (only --path is anchored).")
@click.option("--importance", type=float, default=0.5, show_default=True,
              help="How much it matters, 0 to 1.")
@click.option("--valid-from", help="When it became true in the world (ISO date).")
@click.option("--valid-until", help="When it stopped being true in the world (ISO date).")
@click.option("--source", help='Where it came from ("chat", "code review", an agent).')
@click.option("--session", envvar=["GITMEM_SESSION", "GIT_MEM_SESSION"],
              help="Session id [env GITMEM_SESSION].")
@click.option("--ephemeral", is_flag=True,
              help="Keep it in the session's working memory only: local, never pushed, "
                   "dropped when the session ends (needs --session).")
@click.option("--keep", is_flag=True,
              help="With --ephemeral: propose it for the shared log when the session ends.")
@by_option
@click.option("--supersedes", "supersedes", multiple=True,
              help="Id of a memory this one replaces (repeatable).")
@click.option("--redact", is_flag=True,
              help="Store the text with detected secrets masked instead of refusing it.")
@click.option("--force", is_flag=True,
              help="Store it even if a near-duplicate of the same kind is stored.")
@personal_option
@json_option
def add(**params: Any) -> None:
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
      git mem add "retries must stay idempotent" --path src/api/client.py:40-88 --symbol retry
      git mem add "I write British English" --kind persona --personal
    """
    if params["text"] == "-":
        params["text"] = read_stdin("add", params["as_json"])
    if params["keep"] and not params["ephemeral"]:
        raise click.UsageError("--keep goes with --ephemeral")
    if params["ephemeral"] and (params["personal"] or params["paths"] or params["key"]
                                or params["supersedes"]):
        raise click.UsageError("--ephemeral takes no --personal, --path, --key or "
                               "--supersedes: working memory is plain notes")
    actions.add(**params)


@cli.command(name="import")
@click.argument("file", type=click.File("rb"))
@click.option("--pack-size", type=int, default=5000, show_default=True,
              help="Memories per commit, at most.")
@click.option("--redact", is_flag=True,
              help="Mask detected secrets instead of refusing the whole import.")
@json_option
def import_(file: IO[bytes], pack_size: int, redact: bool, as_json: bool) -> None:
    """Bulk-add memories from a JSON-lines FILE (- for stdin), many per commit.

    Each line is an object with the options of 'add': {"text": "...", "kind":
    "fact", "key": ..., "tags": [...], "about": [...], "paths": [...],
    "importance": 0.5, "valid_from": ..., "valid_until": ..., "source": ...,
    "session": ..., "recorded_at": ...}; as with 'add', a line with a key and no
    kind takes its key's kind (a new key's is fact), one with neither is a note.
    All lines are checked before anything
    is written: one bad line, even the last of a pipe, and nothing is. A
    recorded_at more than a day ahead is refused (replay would not believe it);
    a UTF-8 byte order mark at the start of FILE is skipped.

    Memory stays small whatever the input: lines are read one at a time (a
    line over 65536 bytes is refused by its number), checked lines wait in a
    temporary file (in TMPDIR, about the input's size), then memories are
    written in packs of at most --pack-size and 2 MiB, each one commit. An
    interruption while writing keeps the packs already written, each whole.

    \b
    Example:
      git mem import notes.jsonl
    """
    run("import", as_json, lambda s: s.import_records(file, pack_size=pack_size, redact=redact),
        render.imported)


@cli.command()
@click.argument("memory_id", metavar="ID")
@json_option
def show(memory_id: str, as_json: bool) -> None:
    """Show a memory: the whole record, its provenance and every op on it.

    \b
    Example:
      git mem show 3f2a9c1
    """
    run("show", as_json, lambda s: s.show(memory_id), render.show)


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
    run("log", as_json, lambda s: render.Ops(ops=s.log_ops(limit, author)), render.log)


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
    run("invalidate", as_json, lambda s: s.invalidate(memory_id, reason), render.invalidated)


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
    run("forget", as_json,
        lambda s: s.forget(memory_id, reason, purge=purge, dry_run=dry_run), render.forgot)

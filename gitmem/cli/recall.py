"""Commands that find memories: recall, context (the briefing), similar."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from ..api.reads import STATUSES
from ..ops import KINDS
from . import actions, render
from .app import KindChoice, as_of_option, cli, json_option, run, valid_at_option


def narrowing(fn: Callable[..., None]) -> Callable[..., None]:
    """The filters recall and list share (repeatable; see each help line)."""
    for option in reversed([
        click.option("--kind", "kinds", type=KindChoice(KINDS), multiple=True,
                     help="Only this kind (repeatable: any of them)."),
        click.option("--tag", "tags", multiple=True,
                     help="Only memories with this tag (repeatable: all)."),
        click.option("--author", "authors", multiple=True, metavar="WHO",
                     help="Only memories by this author, name or email (repeatable: any)."),
        click.option("--about", multiple=True, metavar="NAME",
                     help="Only memories about this entity (repeatable: all)."),
        click.option("--path", "paths", multiple=True, metavar="PATH",
                     help="Only memories anchored to PATH, a directory above it or a file "
                          "below it (repeatable: all)."),
    ]):
        fn = option(fn)
    return fn


@cli.command()
@click.argument("query", required=False)
@click.option("-k", "--limit", "k", type=int, default=10, show_default=True,
              help="How many results.")
@click.option("--diff", "diff", is_flag=False, flag_value="", default=None, metavar="[REV]",
              help="Instead of QUERY: the memories that matter for a change, the work tree "
                   "against HEAD (or REV, or A..B): tied to the touched paths, then naming "
                   "the identifiers on the changed lines.")
@narrowing
@click.option("--min-score", type=float, metavar="SCORE",
              help="Leave out hits less relevant than SCORE (0 to 1; 0.5 reads \"probably "
                   "relevant\"). Default: gitmem.minScore, else 0.05 from 50 memories up.")
@click.option("--all", "include_retired", is_flag=True,
              help="Include invalidated and superseded memories (marked).")
@click.option("--mode", type=click.Choice(["hybrid", "lexical", "vector"]), default="hybrid",
              show_default=True, help="Which channels rank: both fused, or one alone.")
@click.option("--format", "fmt", type=click.Choice(["full", "brief"]), default="full",
              show_default=True,
              help="brief: one line per hit (with --json: id, score, kind, text, recorded_at).")
@click.option("--explain", is_flag=True,
              help="Show each result's rank per channel and every factor of its score.")
@click.option("--quarantined", "include_quarantined", is_flag=True,
              help="Include memories the write gate would refuse (marked).")
@as_of_option
@valid_at_option
@click.option("--personal", is_flag=True,
              help="Search only your personal pool (also works outside any repository).")
@click.option("--session", envvar=["GITMEM_SESSION", "GIT_MEM_SESSION"], metavar="ID",
              help="Read this agent session's working memory first [env GITMEM_SESSION].")
@json_option
def recall(**params: Any) -> None:
    """Find the memories that answer QUERY, best first.

    Each hit's score is its relevance, 0 to 1 (0.5: probably relevant); hits
    below the cutoff are left out, and when none is left it says "no memory
    matches" (JSON: "hits": []). Only current truth by default: --all adds
    retired memories, losing values of keyed conflicts and faded ones
    (salience below gitmem.salienceFloor), each marked. --as-of and
    --valid-at query the past (docs/time.md). Your personal pool, if you
    have one, is searched too: its hits are marked [personal]. With --session
    (or GITMEM_SESSION), that agent session's working memory comes first,
    marked [session].

    \b
    Example:
      git mem recall "how do I run the tests" -k 5 --json
      git mem recall "which database" --as-of v1.4
      git mem recall "retries" --path src/http/ --format brief
      git mem recall --diff main
    """
    if params["query"] is None and params["diff"] is None:
        raise click.UsageError("Missing argument 'QUERY' (or give --diff [REV]).")
    if params["query"] is not None and params["diff"] is not None:
        raise click.UsageError("give a QUERY or --diff [REV], not both")
    actions.recall(**params)


@cli.command(name="list")
@narrowing
@click.option("--since", metavar="WHEN", help="Only memories recorded since WHEN (a date, "
              "datetime or git revision).")
@click.option("--until", metavar="WHEN", help="Only memories recorded until WHEN.")
@click.option("--status", type=click.Choice(STATUSES), default="active", show_default=True,
              help="active: current truth; retired: invalidated, superseded and losing "
                   "values; all: both.")
@click.option("--quarantined", "include_quarantined", is_flag=True,
              help="Include memories the write gate would refuse (marked).")
@click.option("-n", "--limit", type=int, default=50, show_default=True,
              help="How many memories per page.")
@click.option("--offset", type=int, default=0, show_default=True,
              help="Skip this many (the next page's offset is printed at the end).")
@click.option("--personal", is_flag=True,
              help="List only your personal pool (also works outside any repository).")
@json_option
def list_(kinds: tuple[str, ...], tags: tuple[str, ...], authors: tuple[str, ...],
          about: tuple[str, ...], paths: tuple[str, ...], since: str | None, until: str | None,
          status: str, include_quarantined: bool, limit: int, offset: int, personal: bool,
          as_json: bool) -> None:
    """Browse memories, newest first, one page at a time.

    No query: every memory the filters let through, by recorded time. Use it to
    review what the repository remembers, or what one person or agent added.

    \b
    Example:
      git mem list --kind procedure
      git mem list --author alice@example.com --since "2 weeks ago" --json
      git mem list --path src/billing/ --offset 50
    """
    run("list", as_json, lambda s: s.list_memories(
        kinds=kinds, tags=tags, authors=authors, about=about, paths=paths, since=since,
        until=until, status=status, include_quarantined=include_quarantined, limit=limit,
        offset=offset), render.listing, personal=personal)


@cli.command()
@click.option("--budget", type=int, default=500, show_default=True,
              help="Most tokens to print (estimated as characters / 4).")
@click.option("--format", "fmt", type=click.Choice(["md"]), default="md", show_default=True,
              help="Output format without --json: Markdown.")
@click.option("--personal", is_flag=True,
              help="Only your personal pool (also works outside any repository).")
@json_option
def context(**params: Any) -> None:
    """Print the memory profile an agent should read first, within a budget.

    Persona, current keyed facts, procedures and conventions, the most salient
    notes and what changed lately; your personal pool's memories come first in
    each section, marked [personal]. Memory text sits between git-mem-context
    tags, as data. The same log and clock give the same output.

    \b
    Example:
      git mem context --budget 800
    """
    actions.context(**params)


@cli.command()
@click.argument("memory_id", metavar="ID", required=False)
@click.option("--since", metavar="WHEN", help="Only pairs with a memory recorded since WHEN.")
@click.option("--kind", "kinds", type=KindChoice(KINDS), multiple=True,
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
    run("similar", as_json,
        lambda s: render.Pairs(pairs=s.similar(memory_id, since=since, limit=limit, kinds=kinds)),
        render.similar)

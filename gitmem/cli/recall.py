"""Commands that find memories: recall, context (the briefing), similar."""

from __future__ import annotations

import click

from ..ops import KINDS
from . import render
from .app import as_of_option, cli, json_option, run, valid_at_option


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
    run(
        "recall", as_json,
        lambda s: render.Recalled(query=query, results=s.recall(
            query, k=k, kinds=kinds, tags=tags, include_retired=include_retired, mode=mode,
            explain=explain, include_quarantined=include_quarantined, as_of=as_of,
            valid_at=valid_at)),
        render.hits, personal=personal,
    )


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
    run("context", as_json, lambda s: s.context(budget=budget), render.context,
        personal=personal)


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
    run("similar", as_json,
        lambda s: render.Pairs(pairs=s.similar(memory_id, since=since, limit=limit, kinds=kinds)),
        render.similar)

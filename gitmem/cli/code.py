"""Commands on memory and the code it is about: stale, about, bootstrap, export."""

from __future__ import annotations

import click

from . import render
from ..ops import KINDS
from .app import KindChoice, cli, json_option, run


@cli.command()
@json_option
def stale(as_json: bool) -> None:
    """List memories whose anchored code changed since they were written.

    A memory added with --path (or naming paths that exist) records what each
    path held at HEAD. When that code is changed, renamed or deleted, the
    memory is listed here, newest change first, and flagged "code changed
    since" in recall, show and context. Review each: 'git mem confirm ID'
    says it still holds (and re-anchors it at HEAD); 'git mem invalidate ID'
    retires it. Changes of white space only, and reverts, do not count.

    \b
    Example:
      git mem stale
    """
    run("stale", as_json, lambda s: s.stale(), render.records)


@cli.command()
@click.argument("path")
@json_option
def about(path: str, as_json: bool) -> None:
    """List the memories anchored to PATH or to a folder above it, best first.

    For a folder, memories anchored to anything inside it are listed too.

    \b
    Example:
      git mem about src/auth/session.py
    """
    run("about", as_json, lambda s: s.about(path), render.records)


@cli.command()
@click.option("--yes", is_flag=True, help="Add them (without it: only show what it would add).")
@json_option
def bootstrap(yes: bool, as_json: bool) -> None:
    """Propose memories from the instruction files this repository already has.

    Reads CLAUDE.md, AGENTS.md, GEMINI.md, .cursorrules, .cursor/rules/*,
    .github/copilot-instructions.md, CONTRIBUTING.md and ADRs (docs/adr,
    doc/adr, docs/decisions): one memory per bullet or short section, of the
    right kind, anchored to its file and lines and to the paths it names.
    Shows what it would add; --yes adds. Running it again adds nothing new; a
    changed line supersedes the memory it came from. Every memory passes the
    write gate. The block 'git mem export' writes is skipped.

    \b
    Example:
      git mem bootstrap
      git mem bootstrap --yes
    """
    run("bootstrap", as_json, lambda s: s.bootstrap(yes=yes), render.bootstrapped)


@cli.command()
@click.option("--format", "fmt", type=click.Choice(["agents-md", "markdown", "jsonl"]),
              default="agents-md", show_default=True,
              help="agents-md: a block between markers; jsonl: the import format.")
@click.option("--kind", "kinds", multiple=True, type=KindChoice(KINDS),
              help="Export every current memory of this kind (repeatable) instead of the "
                   "default: procedures, conventions, decisions and keyed facts.")
@click.option("--into", "into", metavar="FILE",
              help="Write the agents-md block into FILE (e.g. AGENTS.md), replacing the block "
                   "an earlier export wrote.")
@json_option
def export(fmt: str, kinds: tuple[str, ...], into: str | None, as_json: bool) -> None:
    """Print the team's current procedures, conventions and keyed facts.

    For agents and people who do not run git mem: an AGENTS.md section (between
    markers, so a re-export replaces only its own block), Markdown, or JSON lines
    that 'git mem import' takes back. What holds now, as 'get' and 'context' say
    it: a key's winning value, nothing whose validity has not started or has
    ended. JSON lines keep valid_from, valid_until and recorded_at. HTML comments
    in a memory are escaped in Markdown (they would hide from readers).

    \b
    Example:
      git mem export --into AGENTS.md
      git mem export --format jsonl --kind procedure > procedures.jsonl
    """
    run("export", as_json, lambda s: s.export(fmt, kinds=kinds, into=into), render.exported)

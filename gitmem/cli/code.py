"""Commands on memory and the code it is about: stale, about."""

from __future__ import annotations

import click

from . import render
from .app import cli, json_option, run


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

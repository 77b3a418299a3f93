"""``git mem ui``: the memory panel in a local browser page (gitmem/ui)."""

from __future__ import annotations

import sys

import click

from ..errors import GitMemError, InvalidInput
from . import render
from .app import cli


@cli.command(name="ui")
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Port on 127.0.0.1 (0: a free one).")
@click.option("--no-browser", is_flag=True, help="Print the URL only; do not open a browser.")
def ui(port: int, no_browser: bool) -> None:
    """Browse, search and review the memory in a local web page.

    Serves on 127.0.0.1 only, on a random port; the printed URL carries a
    one-time token. Search with the CLI's filters, open a memory (text,
    provenance, anchors, every op, its links), move the as-of slider over
    both timelines, see keyed facts and conflicts, what fades soon, stale
    memories and the inbox; confirm, invalidate, forget, accept or reject,
    each after a confirmation. Needs the 'ui' extra: pip install
    'git-mem[ui]'.

    \b
    Example:
      git mem ui
    """
    from .. import ui as panel

    if not panel.available():
        missing = InvalidInput("git mem ui needs Jinja2, which is not installed",
                               "pip install 'git-mem[ui]' (or pip install jinja2)")
        click.echo(render.safe(missing.one_line()), err=True)
        sys.exit(missing.exit_code)
    try:
        sys.exit(panel.serve(open_browser=not no_browser, port=port))
    except GitMemError as exc:
        click.echo(render.safe(exc.one_line()), err=True)
        sys.exit(exc.exit_code)

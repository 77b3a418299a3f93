"""Commands on the store as a whole: sharing it (pull, push, sync), setting a
clone up (init, rekey) and looking after it (status, rebuild)."""

from __future__ import annotations

import click

from . import render
from .app import cli, json_option, personal_option, run

remote_arg = click.argument("remote", required=False)


@cli.command()
@personal_option
@json_option
def status(personal: bool, as_json: bool) -> None:
    """Show partitions, op and memory counts, and the projection's state.

    Partitions: the first 50 by name, this clone's among them, and how many in
    all ('git for-each-ref refs/memory/' lists every one).

    \b
    Example:
      git mem status --json
    """
    run("status", as_json, lambda s: s.status(), render.status, personal=personal)


@cli.command()
@json_option
def rebuild(as_json: bool) -> None:
    """Drop the projection's content and replay every partition from the op-log.

    Readers in other processes keep answering from the old content until the
    replay commits. A damaged projection is deleted first, unread.

    \b
    Example:
      git mem rebuild
    """
    run("rebuild", as_json, lambda s: s.rebuild(), render.rebuilt)


@cli.command()
@click.option("--catch-up", "catch_up", is_flag=True,
              help="Refresh in committed slices under the catch-up lock (what hooks and the "
                   "MCP server start in the background); exits at once if one is running.")
@json_option
def refresh(catch_up: bool, as_json: bool) -> None:
    """Bring the projection up to date with refs/memory/* now.

    Every read does this first; run it after a big fetch to pay for the replay
    up front. Hooks and the MCP server refresh for at most a second or two,
    answer from what is replayed by then, and leave the rest to a background
    'git mem refresh --catch-up'.

    \b
    Example:
      git mem refresh
    """
    if catch_up:
        run("refresh", as_json, lambda s: {"caught_up": s.catch_up()},
            lambda r: "caught up" if r["caught_up"] else "a catch-up is already running")
        return
    run("refresh", as_json, lambda s: s.refresh(), render.refreshed)


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
    run("pull", as_json, lambda s: s.pull(remote), render.sync, personal=personal)


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
    run("push", as_json, lambda s: s.push(remote), render.sync, personal=personal)


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
    run("sync", as_json, lambda s: s.sync(remote), render.sync, personal=personal)


@cli.command()
@click.option("--fetch-refspec", is_flag=True,
              help="Also make a plain 'git fetch' bring memory (into refs/memory-remotes/).")
@click.option("--remote", help="The remote for --fetch-refspec (default: as git fetch).")
@click.option("--pre-push/--no-pre-push", "pre_push", default=None,
              help="Install (or remove) a pre-push hook: a plain 'git push' then also pushes "
                   "this clone's memory to the same remote. Opt-in; an existing pre-push "
                   "hook is kept and runs first.")
@json_option
def init(fetch_refspec: bool, remote: str | None, pre_push: bool | None, as_json: bool) -> None:
    """Optional one-time set-up of this clone; safe to run again.

    Creates this clone's partition id. Sharing is opt-in: with --fetch-refspec,
    adds '+refs/memory/*:refs/memory-remotes/<remote>/*' to the remote's fetch
    refspecs, so a plain 'git fetch' also brings memory; with --pre-push, a
    plain 'git push' also pushes memory (a failed memory push only warns). Without
    them, what 'git push' and 'git pull' do to code is unchanged.

    \b
    Example:
      git mem init --fetch-refspec --pre-push
    """
    run("init", as_json,
        lambda s: s.init(fetch_refspec=fetch_refspec, remote=remote, pre_push=pre_push),
        render.init)


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
    run("rekey", as_json, lambda s: s.rekey(), render.rekeyed)

"""Commands for memory that grows by itself: capture, the inbox, session working
memory, links and skills (docs/growth.md). Human output is rendered here; the
work is in ``gitmem.api`` (capture, inbox, scratch, links, skills)."""

from __future__ import annotations

import os

import click

from .. import api
from ..model import CaptureReport, Proposal, Related, ScratchNote, SkillProposal, Verdict
from ..ops import PREDICATES
from . import render
from .app import Group, by_option, cli, json_option, run, who

session_option = click.option("--session", envvar=["GITMEM_SESSION", "GIT_MEM_SESSION"],
                              metavar="ID", help="The agent session [env GITMEM_SESSION].")


@cli.command(name="capture")
@click.option("--transcript", type=click.Path(dir_okay=False), metavar="FILE",
              help="The session's transcript (Claude Code JSONL, Gemini CLI JSON, "
              "Codex CLI rollout JSONL; told apart by content).")
@session_option
@click.option("--agent", metavar="NAME", help="Whose session it was (claude-code, gemini-cli, "
              "codex).")
@click.option("--event", metavar="EVENT", hidden=True,
              help="The hook event that asked (SessionEnd drops the working memory).")
@click.option("--no-model", is_flag=True, help="Only the built-in rules, even if "
              "gitmem.extractor names a model command.")
@click.option("--log", "to_log", is_flag=True, hidden=True,
              help="Append a one-line summary to .git/mem/capture.log (the background run).")
@json_option
def capture(transcript: str | None, session: str | None, agent: str | None, event: str | None,
            no_model: bool, to_log: bool, as_json: bool) -> None:
    """Propose memories from an agent session; file them in the inbox.

    Reads the transcript (the session-end hook does this in the background,
    so you rarely run it by hand) for explicit requests ("remember that",
    "from now on", "always", "never"), corrections, commands that kept
    succeeding, files the session kept returning to and the session's kept
    notes; with gitmem.extractor set, also asks that model command. Nothing
    reaches the shared log until you 'git mem accept' it.

    \b
    Example:
      git mem capture --transcript ~/.claude/projects/-src-app/5d3c2a4e.jsonl
    """
    def act(s: api.Store) -> CaptureReport:
        report = s.capture(transcript, session=session, agent=agent, event=event,
                           use_model=not no_model)
        if to_log:
            _log(s, report)
        return report

    # The background run's summary line is its whole output.
    run("capture", as_json, act, (lambda r: None) if to_log else _captured)


def _log(store: api.Store, r: CaptureReport) -> None:
    import time

    line = (f"{time.strftime('%Y-%m-%dT%H:%M:%S')} session={r.session} events={r.events} "
            f"proposed={len(r.proposed)} known={r.known} refused={r.refused} "
            f"accepted={len(r.accepted)}" + "".join(f" error={e!r}" for e in r.errors) + "\n")
    from ..agents.spawn import append_fd  # never through a link, only a file of ours

    fd = append_fd(str(store.log.state_dir / "capture.log"))
    if fd < 0:
        return
    try:
        os.write(fd, line.encode("utf-8", "replace"))
    except OSError:
        pass
    finally:
        os.close(fd)


def _captured(r: CaptureReport) -> str:
    lines = [f"{len(r.proposed)} new proposal{'s' if len(r.proposed) != 1 else ''} "
             f"from {r.events} events"
             + (f" ({r.known} already proposed or decided)" if r.known else "")
             + (f"; {r.refused} refused by the write gate" if r.refused else "")]
    lines += [_one(p) for p in r.proposed]
    if r.accepted:
        lines.append(f"accepted into your personal pool: {len(r.accepted)}")
    lines += [f"warning: {e}" for e in r.errors]
    if r.proposed:
        lines.append("review with 'git mem inbox'")
    return "\n".join(lines)


def _one(p: Proposal) -> str:
    if p.action == "confirm":
        what = f"confirm {(p.target or '')[:12]}" + (f" ({p.outcome})" if p.outcome else "")
        return f"{p.id[:8]}  {what}: {render.clip_line(p.text, 100)}  [{p.reason}]"
    return f"{p.id[:8]}  {p.kind}: {render.clip_line(p.text, 100)}  [{p.reason}]"


@cli.command(name="inbox")
@json_option
def inbox(as_json: bool) -> None:
    """List proposals waiting for a verdict, with their evidence.

    Each came from an agent session (capture): accept one to store it as an
    ordinary memory, reject it so it is not proposed again. The inbox is local
    to this clone and never pushed.

    \b
    Example:
      git mem inbox
      git mem accept 3f2a9c1e
    """
    run("inbox", as_json, lambda s: s.inbox(), _inbox)


def _inbox(items: list[Proposal]) -> str:
    if not items:
        return "the inbox is empty"
    out = []
    for p in items:
        out.append(_one(p))
        if p.action == "confirm" and p.target_text:
            out.append(f"          same as: {render.clip_line(p.target_text, 100)}")
        where = f"session {p.session[:12]}" if p.session else "no session"
        for ev in p.evidence[:3]:
            at = f"line {ev.line}" if ev.line else "quoted"
            out.append(f"          {where}, {at}: {render.clip_line(ev.excerpt, 90)}")
    out.append("accept with 'git mem accept ID [--edit]', reject with 'git mem reject ID'")
    return "\n".join(out)


@cli.command(name="accept")
@click.argument("proposal", metavar="ID")
@click.option("--edit", is_flag=True, help="Edit the text in $EDITOR before it is stored.")
@click.option("--text", metavar="TEXT", help="Store this text instead of the proposed one.")
@click.option("--personal", is_flag=True, help="Into your personal pool, not the team's log.")
@json_option
def accept(proposal: str, edit: bool, text: str | None, personal: bool, as_json: bool) -> None:
    """Store an inbox proposal as an ordinary memory (or confirmation).

    It passes the write gate and dedup like any 'git mem add'.

    \b
    Example:
      git mem accept 3f2a9c1e --edit
    """
    def act(s: api.Store) -> Verdict:
        new = text
        if edit:
            current = next((p for p in s.inbox() if p.id.startswith(proposal.lower())), None)
            edited = click.edit((new or (current.text if current else "")) + "\n")
            if edited is None or not edited.strip():
                raise click.UsageError("nothing was saved in the editor; the proposal waits")
            new = edited.strip()
        return s.accept(proposal, text=new, personal=personal)

    run("accept", as_json, act, _verdict)


@cli.command(name="reject")
@click.argument("proposal", metavar="ID")
@json_option
def reject(proposal: str, as_json: bool) -> None:
    """Drop an inbox proposal; the same one is not proposed again.

    \b
    Example:
      git mem reject 3f2a9c1e
    """
    run("reject", as_json, lambda s: s.reject(proposal), _verdict)


def _verdict(v: Verdict) -> str:
    if v.verdict == "rejected":
        return f"rejected {v.id[:8]}; it will not be proposed again"
    where = " (personal pool)" if v.pool == "personal" else ""
    same = f", already stored as {v.duplicate_of[:12]}" if v.duplicate_of else ""
    return f"accepted {v.id[:8]} as {(v.memory or '')[:12]}{where}{same}"


@cli.group(name="session", cls=Group)
def session_() -> None:
    """An agent session's working memory: local notes, gone when it ends.

    Add to it with 'git mem add TEXT --ephemeral --session ID' (hooks pass
    the agent's session id; GITMEM_SESSION works too).

    \b
    Example:
      git mem session show --session 5d3c2a4e
    """


@session_.command(name="show")
@session_option
@json_option
def session_show(session: str | None, as_json: bool) -> None:
    """List a session's working-memory notes, oldest first.

    \b
    Example:
      git mem session show --session 5d3c2a4e
    """
    run("session show", as_json, lambda s: s.session_notes(session or ""), _notes)


def _notes(notes: list[ScratchNote]) -> str:
    if not notes:
        return "no notes in this session's working memory"
    return "\n".join(f"{n.id[:8]}  {n.kind}{' [keep]' if n.keep else ''}: "
                     f"{render.clip_line(n.text, 110)}" for n in notes)


@session_.command(name="end")
@session_option
@json_option
def session_end(session: str | None, as_json: bool) -> None:
    """Drop a session's working memory (the session-end hook does this).

    \b
    Example:
      git mem session end --session 5d3c2a4e
    """
    run("session end", as_json, lambda s: {"dropped": s.end_session(session or "")},
        lambda r: f"dropped {r['dropped']} note{'s' if r['dropped'] != 1 else ''}")


@cli.command(name="link")
@click.argument("src", metavar="A")
@click.argument("predicate", metavar="PREDICATE", type=click.Choice(PREDICATES))
@click.argument("dst", metavar="B")
@by_option
@json_option
def link(src: str, predicate: str, dst: str, by: str | None, as_json: bool) -> None:
    """Link two things: people, paths, keys, components or memories.

    A and B may be typed (person:ada@example.com, path:src/auth, key:db.engine,
    component:billing, memory:ID) or bare: an id, an e-mail, a path of the
    work tree, else a component. A link is a memory of kind edge: it is
    shared, can be invalidated, and gives recall a graph signal.

    \b
    Example:
      git mem link ada@example.com works_on billing
      git mem link billing depends_on path:src/payments
    """
    run("link", as_json, lambda s: s.link(src, predicate, dst, by=who(by)), render.added)


@cli.command(name="related")
@click.argument("node", metavar="X")
@click.option("--depth", type=click.IntRange(1, 4), default=2, show_default=True,
              help="How many hops to follow.")
@json_option
def related(node: str, depth: int, as_json: bool) -> None:
    """What is linked to X, nearest first (links in both directions).

    \b
    Example:
      git mem related ada@example.com --depth 2
    """
    run("related", as_json, lambda s: s.related(node, depth=depth), _related)


def _related(r: Related) -> str:
    if not r.edges:
        return f"nothing is linked to {r.node}"
    lines = [f"{r.node}:"]
    for e in r.edges:
        lines.append(f"  {'  ' * (e.hops - 1)}{e.src} {e.predicate} {e.dst}  "
                     f"({e.id[:12]}, {e.hops} hop{'s' if e.hops != 1 else ''})")
    for m in r.memories:
        lines.append(f"  memory {m.id[:12]}: {render.clip_line(m.text or '', 100)}")
    return "\n".join(lines)


@cli.command(name="skills")
@click.option("--write", "write_files", is_flag=True,
              help="Write the proposed SKILL.md files (and keep a reference memory).")
@json_option
def skills(write_files: bool, as_json: bool) -> None:
    """Procedures that kept working, proposed as SKILL.md files (a diff).

    A procedure graduates once it has worked gitmem.skillThreshold times
    (default 3; record runs with 'git mem confirm ID --worked/--failed') and
    failed at most a quarter as often. Files go under gitmem.skillsDir
    (default .claude/skills/<name>/SKILL.md) only with --write. Skills that
    keep failing or go unused are proposed for retirement, never deleted.

    \b
    Example:
      git mem skills
      git mem skills --write
    """
    run("skills", as_json, lambda s: s.skills(write=write_files), _skills)


def _skills(items: list[SkillProposal]) -> str:
    if not items:
        return "no procedure has kept working often enough yet"
    out = []
    for s in items:
        if s.action == "graduate":
            out.append(f"{'wrote' if s.written else 'would write'} {s.path}: {s.reason}")
            if not s.written:
                out.append(s.diff.rstrip("\n"))
        elif s.action == "retire":
            out.append(f"retire? {s.path} ({s.reason}): 'git mem invalidate {s.memory[:12]}' "
                       f"and remove the file")
        elif s.action == "refused":
            out.append(f"not written: {s.reason}")
        else:
            out.append(f"{s.path} is current ({s.reason})")
    if any(s.action == "graduate" and not s.written for s in items):
        out.append("write them with 'git mem skills --write'")
    return "\n".join(out)

"""Commands for coding agents: the MCP server, lifecycle hooks, the AGENTS.md block.

The work is in ``gitmem.agents``; these commands only wire it to the shell.
``git mem mcp`` imports the MCP SDK when it runs, never before: every other
command (and a hook, before every prompt) stays fast.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import click

from ..agents import hooks, settings
from ..agents.agents_md import AGENTS_MD
from . import render
from .app import Group, cli, emit, json_option, run, stdin_bytes


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


agent_option = click.option("--agent", type=click.Choice(settings.AGENTS), default="claude-code",
                            show_default=True, help="Which agent's settings to change.")


@cli.group(name="hooks", cls=Group)
def hooks_() -> None:
    """Install or remove an agent's lifecycle hooks that call git mem.

    For Claude Code, the repository's .claude/settings.json gets: at session
    start the memory briefing ('git mem hook session-start'), on each prompt
    the few memories that match it ('git mem hook user-prompt'), before a
    file is read or changed the memories about it ('git mem hook pre-tool').
    For Gemini CLI (--agent gemini-cli), .gemini/settings.json gets the same
    three on SessionStart, BeforeAgent and AfterTool. Other settings and
    hooks are kept.

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
    run("hooks install", as_json, lambda s: settings.install(s.log.workdir, agent), render.hooks)


@hooks_.command(name="uninstall")
@agent_option
@json_option
def hooks_uninstall(agent: str, as_json: bool) -> None:
    """Remove exactly git mem's hooks from the agent's settings; keep the rest.

    \b
    Example:
      git mem hooks uninstall
    """
    run("hooks uninstall", as_json, lambda s: settings.uninstall(s.log.workdir, agent),
        render.hooks)


@cli.group(name="hook", cls=Group)
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
    """Read the payload, answer it; print the agent's JSON or nothing. Always exit 0.
    (Without options, ``gitmem.cli.main`` runs the same answer without click.)"""
    out, err = hooks.respond(event, answer, stdin_bytes())
    if out:
        click.echo(out, nl=False)
    if err:
        click.echo(render.safe(err), err=True, nl=False)
    sys.exit(0)


@hook_.command(name="session-start")
@click.option("--budget", type=click.IntRange(min=1), default=hooks.SESSION_BUDGET,
              show_default=True,
              help="Size of the briefing, in tokens.")
def hook_session_start(budget: int) -> None:
    """SessionStart: add the memory briefing ('git mem context') to the session.

    \b
    Example:
      echo '{"cwd": ".", "source": "startup"}' | git mem hook session-start
    """
    _hook("SessionStart", lambda payload: hooks.answer_session_start(payload, budget))


@hook_.command(name="user-prompt")
@click.option("-k", "--limit", "k", type=click.IntRange(1, hooks.PROMPT_K_MAX),
              default=hooks.PROMPT_K,
              show_default=True, help="At most this many memories.")
def hook_user_prompt(k: int) -> None:
    """UserPromptSubmit: add the memories that match the prompt; silent when none do.

    \b
    Example:
      echo '{"cwd": ".", "prompt": "how do I run the tests"}' | git mem hook user-prompt
    """
    _hook("UserPromptSubmit", lambda payload: hooks.answer_user_prompt(payload, k))


@hook_.command(name="pre-tool")
def hook_pre_tool() -> None:
    """PreToolUse (Read, Edit, Write): add the memories anchored to the file.

    Once per file per session, silent when none; never blocks the tool call.

    \b
    Example:
      echo '{"cwd": ".", "session_id": "s1", "tool_name": "Read",
             "tool_input": {"file_path": "src/auth/session.py"}}' | git mem hook pre-tool
    """
    _hook("PreToolUse", hooks.answer_pre_tool)


@hook_.command(name="session-end")
@click.option("--agent", default="claude-code", show_default=True, metavar="NAME",
              help="Whose session it is (claude-code, gemini-cli).")
def hook_session_end(agent: str) -> None:
    """Stop, SessionEnd, PreCompact: capture the session in the background.

    Starts 'git mem capture' detached on the payload's transcript_path and
    returns at once (its summary goes to .git/mem/capture.log); proposals
    wait in 'git mem inbox'. At SessionEnd the session's working memory is
    dropped after capture read it. Never blocks: prints nothing, exits 0.

    \b
    Example:
      echo '{"cwd": ".", "session_id": "s1", "transcript_path": "t.jsonl",
             "hook_event_name": "SessionEnd"}' | git mem hook session-end
    """
    from ..agents import spawn

    sys.exit(spawn.main(["--agent", agent]))


@cli.command(name="agents-md")
@json_option
def agents_md(as_json: bool) -> None:
    """Print a short block for AGENTS.md or CLAUDE.md: how an agent uses git mem.

    \b
    Example:
      git mem agents-md >> AGENTS.md
    """
    emit("agents-md", as_json, {"markdown": AGENTS_MD}, AGENTS_MD)

"""Commands for coding agents: the MCP server, lifecycle hooks, the AGENTS.md block.

The work is in ``gitmem.agents``; these commands only wire it to the shell.
``git mem mcp`` imports the MCP SDK when it runs, never before: every other
command (and a hook, before every prompt) stays fast.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from ..agents import clients, hooks, settings, wiring
from ..agents import doctor as doctor_mod
from ..agents.agents_md import block as agents_block
from . import is_the_program, render
from .app import Group, cli, emit, json_option, run, stdin_bytes


@cli.group(name="mcp", cls=Group, invoke_without_command=True)
@click.pass_context
def mcp_(ctx: click.Context) -> None:
    """Serve this repository's memory to an agent over MCP, on stdin/stdout.

    Tools for recall, context, show, list, keys, history, about, stale,
    related and inbox (read-only), and add, set, confirm, link, invalidate
    and forget, with the same write gate, validation and errors as the
    commands; resources memory://context and memory://memory/{id}; a
    briefing prompt. The repository: a tool's repo argument, else the start
    directory, else the client's roots. 'git mem mcp install' registers the
    server with a client; see docs/agents.md.

    \b
    Example:
      git mem mcp install --client cursor
      claude mcp add git-mem -- git mem mcp
    """
    if ctx.invoked_subcommand is None:
        from ..agents import mcp  # the SDK is imported here only: other commands stay fast

        sys.exit(mcp.serve())


class Named(click.Choice[str]):
    """A choice that also takes a short name people type for one ("claude" for
    claude-code, as the program is called), turned into the full one."""

    ALIASES = {"claude": "claude-code"}

    def convert(self, value: Any, param: click.Parameter | None,
                ctx: click.Context | None) -> Any:
        if isinstance(value, str):
            value = self.ALIASES.get(value, value)
        return super().convert(value, param, ctx)


client_option = click.option("--client", type=Named(list(clients.CLIENTS)),
                             default="claude-code", show_default=True,
                             help="Which MCP client's config to change (claude: claude-code).")
scope_option = click.option("--scope", type=click.Choice(["project", "user"]), default="project",
                            show_default=True,
                            help="This work tree's config file, or your user config.")


def _client_report(r: clients.ClientReport) -> str:
    return f"{r.status}: {r.path} ({r.client}, {r.scope})"


@mcp_.command(name="install")
@client_option
@scope_option
@json_option
def mcp_install(client: str, scope: str, as_json: bool) -> None:
    """Register 'git mem mcp' with an MCP client (idempotent; other entries kept).

    Clients: claude-code (.mcp.json), cursor, codex (TOML), gemini-cli,
    windsurf (user scope), opencode, copilot (.vscode/mcp.json). A config
    file that does not parse is left untouched (exit 2).

    \b
    Example:
      git mem mcp install --client cursor --scope user
    """
    run("mcp install", as_json,
        lambda s: clients.install(client, scope, s.log.workdir, Path.home()), _client_report)


@mcp_.command(name="uninstall")
@client_option
@scope_option
@json_option
def mcp_uninstall(client: str, scope: str, as_json: bool) -> None:
    """Remove exactly git mem's entry from an MCP client's config.

    \b
    Example:
      git mem mcp uninstall --client cursor --scope user
    """
    run("mcp uninstall", as_json,
        lambda s: clients.uninstall(client, scope, s.log.workdir, Path.home()), _client_report)


@cli.command(name="doctor")
@click.option("--all", "everything", is_flag=True, help="Every agent git mem knows, found or not.")
@json_option
def doctor(everything: bool, as_json: bool) -> None:
    """What is wired to git mem, per coding agent found here.

    An agent is found when its program is on PATH or its folder or file is in
    the work tree. For each: hooks, the MCP entry (project, user), the
    instruction file that mentions git mem, and the commands that would wire
    what is missing. Outside a repository: programs on PATH and the user-scope
    MCP entries. Changes nothing.

    \b
    Example:
      git mem doctor
    """
    from .. import api
    from ..errors import NotARepository

    try:
        api.open(one_shot=is_the_program()).close()
    except NotARepository:  # what this machine has, user scope: still worth saying
        states = doctor_mod.check(None, Path.home(), everything=everything)
        emit("doctor", as_json, states, "not in a git repository: programs on PATH and "
             "user-scope MCP entries only\n" + _doctor(states, outside=True))
        return
    except Exception:  # noqa: BLE001 - anything else: run() reports it as it does
        pass
    run("doctor", as_json, lambda s: doctor_mod.check(s.log.workdir, Path.home(),
                                                      everything=everything), _doctor)


def _doctor(states: list[doctor_mod.AgentState], outside: bool = False) -> str:
    if not states:
        return "no coding agent found here (git mem doctor --all lists them all)"
    out = []
    for a in states:
        mcp = ", ".join(f"{scope} {'yes' if v else 'no'}" for scope, v in
                        (("project", a.mcp_project), ("user", a.mcp_user)) if v is not None)
        out.append(f"{a.agent}: " + (f"found ({'; '.join(a.found)})" if a.found else
                                     "not found here"))
        out.append(f"  hooks: {a.hooks}; MCP: {mcp or 'no user-scope file'}"
                   + ("" if outside else
                      f"; instructions: {a.instructions or 'no file mentions git mem'}"))
        out += [f"  to do: {t}" for t in a.todo]
    return "\n".join(out)


agent_option = click.option("--agent", type=Named(list(doctor_mod.AGENTS)),
                            default="claude-code", show_default=True,
                            help="Which agent's settings to change (claude: claude-code).")


def _install(root: Path, agent: str) -> settings.HooksReport:
    """The agent's hooks where it has usable ones; its MCP entry and the usage
    block in its instruction file where it reads its own (agents/wiring.py)."""
    return wiring.install(root, Path.home(), agent)


def _uninstall(root: Path, agent: str) -> settings.HooksReport:
    return wiring.uninstall(root, Path.home(), agent)


@cli.group(name="hooks", cls=Group)
def hooks_() -> None:
    """Install or remove an agent's lifecycle hooks that call git mem.

    For Claude Code, the repository's .claude/settings.json gets: at session
    start the memory briefing ('git mem hook session-start'), on each prompt
    the few memories that match it ('git mem hook user-prompt'), before a
    file is read or changed the memories about it ('git mem hook pre-tool').
    For Gemini CLI (--agent gemini-cli), .gemini/settings.json gets the same
    three on SessionStart, BeforeAgent and AfterTool; for Codex CLI, its
    .codex/hooks.json gets the briefing and the prompt hook. For GitHub
    Copilot (VS Code, Copilot CLI, cloud agent), .github/hooks/git-mem.json
    gets the briefing and a file's memories after a tool reads or changes
    it, plus its MCP entry and instruction block. Claude Code, Gemini CLI and
    Codex also hand the session's transcript to a background capture at the
    end of a turn or session ('git mem hook session-end'). Agents without
    hooks git mem can use (cursor, windsurf, opencode) get their MCP entry
    and the usage block in their instruction file instead. Other settings
    and hooks are kept.

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
    run("hooks install", as_json, lambda s: _install(s.log.workdir, agent), render.hooks)


@hooks_.command(name="uninstall")
@agent_option
@json_option
def hooks_uninstall(agent: str, as_json: bool) -> None:
    """Remove exactly git mem's hooks from the agent's settings; keep the rest.

    \b
    Example:
      git mem hooks uninstall
    """
    run("hooks uninstall", as_json, lambda s: _uninstall(s.log.workdir, agent), render.hooks)


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
    out, err = hooks.respond(event, answer, stdin_bytes(hooks.PAYLOAD_BYTES))
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
    _hook("SessionStart", lambda payload: hooks.answer_session_start(
        payload, budget, one_shot=is_the_program()))


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
    _hook("UserPromptSubmit", lambda payload: hooks.answer_user_prompt(
        payload, k, one_shot=is_the_program()))


@hook_.command(name="pre-tool")
def hook_pre_tool() -> None:
    """PreToolUse (Read, Edit, Write): add the memories anchored to the file.

    Once per file per session, silent when none; never blocks the tool call.

    \b
    Example:
      echo '{"cwd": ".", "session_id": "s1", "tool_name": "Read",
             "tool_input": {"file_path": "src/auth/session.py"}}' | git mem hook pre-tool
    """
    _hook("PreToolUse", lambda payload: hooks.answer_pre_tool(
        payload, one_shot=is_the_program()))


@hook_.command(name="session-end")
@click.option("--agent", default="claude-code", show_default=True, metavar="NAME",
              help="Whose session it is (claude-code, gemini-cli, codex).")
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

    The block sits between git-mem:agents markers (as 'hooks install' writes
    it): 'bootstrap' skips it, 'hooks uninstall' removes it.

    \b
    Example:
      git mem agents-md >> AGENTS.md
    """
    text = agents_block()
    emit("agents-md", as_json, {"markdown": text}, text)

#!/usr/bin/env python3
"""Generate docs/cli.md and gitmem/data/man/git-mem.1 from the code: the CLI's own --help
texts, the exit-code table (gitmem.errors.EXIT_CODES) and the envelope's version
(gitmem.envelope.VERSION).

    python scripts/gen_docs.py          # rewrite both files
    python scripts/gen_docs.py --check  # exit 1 if either is out of date

tests/test_docs.py runs the check, so a command without help, or help, an exit
code or the envelope version that changed without the docs, fails the suite.
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gitmem import __version__, envelope  # noqa: E402
from gitmem.cli import cli, load_all  # noqa: E402
from gitmem.errors import EXIT_CODES  # noqa: E402

CLI_MD = ROOT / "docs" / "cli.md"
MAN = ROOT / "gitmem" / "data" / "man" / "git-mem.1"

def _help(name: str | None) -> str:
    """--help of 'git mem', of a command, or of a group's subcommand ("hooks install")."""
    settings = dict(cli.context_settings, terminal_width=80, max_content_width=80)
    ctx = click.Context(cli, info_name="git mem", **settings)
    cmd: click.Command = cli
    for part in (name or "").split():
        assert isinstance(cmd, click.Group)
        cmd = cmd.commands[part]
        ctx = click.Context(cmd, info_name=part, parent=ctx, **settings)
    with ctx:
        return cmd.get_help(ctx)


def commands() -> list[str]:
    """Every command, and after a group each of its subcommands ("hooks install")."""
    out = []
    registered = load_all()
    for name in sorted(registered):
        out.append(name)
        cmd = registered[name]
        if isinstance(cmd, click.Group):
            out += [f"{name} {sub}" for sub in sorted(cmd.commands)]
    return out


def render_md() -> str:
    out = [
        "# CLI reference",
        "",
        "Generated from `--help` by `scripts/gen_docs.py`; do not edit by hand.",
        "",
        "Every command accepts `--json` and then prints exactly one envelope on stdout:",
        "",
        "```json",
        f'{{"ok": true, "command": "recall", "version": {envelope.VERSION}, "data": {{...}}, '
        '"warnings": []}',
        f'{{"ok": false, "command": "recall", "version": {envelope.VERSION}, "error": '
        '{"code": "unknown_id", "message": "...", "hint": "...", "exit_code": 5}, '
        '"warnings": []}',
        "```",
        "",
        "Errors also print one line on stderr, `error: <message>; hint: <how to fix>`; "
        "warnings print `warning: ...` lines on stderr. Output is UTF-8 whatever the "
        "locale says, as git's is. A usage error (an unknown option, a bad value) prints "
        "click's usage text, exit 2; with `--json` anywhere on the command line it prints "
        "the error envelope instead, with the code `usage`, and one `error:` line.",
        "",
        "## Exit codes",
        "",
        "| code | meaning |",
        "|---|---|",
        *[f"| {c} | {m} |" for c, m in sorted(EXIT_CODES.items())],
        "",
        "## git mem",
        "",
        "```",
        _help(None).rstrip(),
        "```",
        "",
    ]
    for name in commands():
        out += [f"## git mem {name}", "", "```", _help(name).rstrip(), "```", ""]
    return "\n".join(out)


def _roff(text: str) -> str:
    lines = []
    for line in text.splitlines():
        line = line.replace("\\", "\\\\").replace("-", "\\-")
        if line.startswith((".", "'")):
            line = "\\&" + line
        lines.append(line)
    return "\n".join(lines)


def render_man() -> str:
    out = [
        f'.TH GIT\\-MEM 1 "" "git-mem {__version__}" "Git Manual"',
        ".SH NAME",
        "git\\-mem \\- a memory for coding agents that lives in the git repository",
        ".SH SYNOPSIS",
        ".B git mem",
        "\\fICOMMAND\\fR [\\fIOPTIONS\\fR] [\\-\\-json]",
        ".SH DESCRIPTION",
        ".nf",
        _roff(_help(None).rstrip()),
        ".fi",
        ".SH COMMANDS",
    ]
    for name in commands():
        out += [f".SS git mem {name}", ".nf", _roff(_help(name).rstrip()), ".fi"]
    out += [".SH EXIT STATUS"]
    for c, m in sorted(EXIT_CODES.items()):
        out += [".TP", f"{c}", _roff(m)]
    out += [
        ".SH FILES",
        ".TP",
        "refs/memory/*",
        "the op\\-log: one partition per author and clone",
        ".TP",
        "\\&.git/mem/cache/",
        "the disposable projection (SQLite + FTS5); safe to delete",
        ".SH SEE ALSO",
        "docs/architecture.md, docs/data\\-model.md and docs/cli.md in the git\\-mem sources",
        "",
    ]
    return "\n".join(out)


def main() -> int:
    check = "--check" in sys.argv[1:]
    stale = []
    for path, text in ((CLI_MD, render_md()), (MAN, render_man())):
        if check:
            if not path.exists() or path.read_text() != text:
                stale.append(str(path.relative_to(ROOT)))
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
    if stale:
        print("out of date: " + ", ".join(stale) + "; run: python scripts/gen_docs.py",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

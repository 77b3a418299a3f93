"""What a teammate pushes cannot drive our terminal or our home directory (issue 13,
items 11 and 14), through a real bare remote and clones."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import craft
from gitmem import ops
from conftest import git, gm, ok

OSC52 = "\x1b]52;c;ZWNobyBwd25lZA==\x07"  # a clipboard write
OSC8 = "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\"  # a hidden link
CSI = "\x1b[2J\x1b[31m"  # clear the screen, red
BIDI = "\u202e"  # right-to-left override


def _push_craft(clone: Path, lines: list[bytes]) -> None:
    tip = craft.commit_packs(clone, [b"\n".join(lines) + b"\n"], name="Mallory",
                             email="mallory@example.com")[-1]
    ref = f"refs/memory/{craft.partition('mallory@example.com')}"
    craft.set_ref(clone, ref, tip)
    git("push", "-q", "origin", f"{ref}:{ref}", cwd=clone)


@pytest.mark.parametrize("command", [
    ["recall", "clipboard", "--quarantined"], ["recall", "clipboard", "--all", "--quarantined"],
    ["recall", "clipboard", "--quarantined", "--explain"], ["log"], ["status"], ["context"],
    ["show", "{id}"],
])
def test_terminal_escapes_from_a_teammate_never_reach_the_terminal(
        command: list[str], team: dict[str, Path]) -> None:
    a, b = team["a"], team["b"]
    op = craft.add_op("mallory", 1, f"the clipboard {OSC52}note {CSI}with {OSC8} and {BIDI}x",
                      session=f"s{OSC8}", tags=["ok"])
    _push_craft(b, [op])
    ok(gm("sync", cwd=a))
    # The author name a hostile op claims is checked on replay (test_hostile.py);
    # here the text and the session carry the escapes.
    args = [x.format(id=ops.op_id(op)) for x in command]
    out = gm(*args, cwd=a)
    shown = out.stdout + out.stderr
    for bad in ("\x1b", "\x07", "\u202e", "\x9b"):
        assert bad not in shown, (args, shown)


def test_a_plain_add_with_an_escape_in_the_author_name_is_shown_inert(repo: Path) -> None:
    env = {"GIT_AUTHOR_NAME": f"Ada{OSC52}", "GIT_COMMITTER_NAME": f"Ada{OSC52}"}
    added = gm("add", "a note whose author name carries an escape", cwd=repo, env=env)
    for args in (["log"], ["recall", "author name escape"], ["status"]):
        out = gm(*args, cwd=repo)
        assert "\x1b" not in out.stdout + out.stderr + added.stderr, args


def test_hooks_install_refuses_a_committed_symlink_out_of_the_repository(
        team: dict[str, Path], tmp_path: Path) -> None:
    a, b = team["a"], team["b"]
    home_settings = Path(os.environ["HOME"]) / ".claude" / "settings.json"
    home_settings.parent.mkdir(parents=True)
    home_settings.write_text('{"model": "mine"}\n')
    (a / ".claude").mkdir()
    (a / ".claude" / "settings.json").symlink_to("../../../home/.claude/settings.json")
    git("add", ".claude/settings.json", cwd=a)
    git("commit", "-q", "-m", "shared settings", cwd=a)
    git("push", "-q", "origin", "main", cwd=a)
    git("pull", "-q", "origin", "main", cwd=b)
    link = b / ".claude" / "settings.json"
    assert link.is_symlink()
    # The link is crafted to land in this test's home from clone b.
    link.unlink()
    link.symlink_to(home_settings)
    before = home_settings.read_text()
    out = gm("hooks", "install", cwd=b)
    assert out.returncode == 2, out.stderr
    assert "outside this repository" in out.stderr and "Traceback" not in out.stderr
    assert home_settings.read_text() == before
    out = gm("hooks", "uninstall", cwd=b)
    assert out.returncode == 2 and home_settings.read_text() == before

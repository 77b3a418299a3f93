"""Files a teammate commits as symbolic links, met by the commands that write an
agent's instruction file: ``git mem export --into`` and ``git mem hooks install``.
A teammate pushes the links through a real bare remote; the user clones and runs
the command. Each wrote outside the repository, copied a file from outside into
it, or broke the repository before (an adversarial run, adv35)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from conftest import deadline, git, gm, init_repo, ok


def _cloned_with_links(tmp_path: Path, links: dict[str, str],
                       files: dict[str, str] | None = None) -> Path:
    """A teammate's commit of ``links`` (name -> target) and ``files`` (name -> text),
    pushed to a bare remote, then cloned by the user."""
    mallory = init_repo(tmp_path / "mallory")
    for name, target in links.items():
        (mallory / name).parent.mkdir(parents=True, exist_ok=True)
        os.symlink(target, mallory / name)
    for name, text in (files or {}).items():
        (mallory / name).parent.mkdir(parents=True, exist_ok=True)
        (mallory / name).write_text(text)
    git("add", "-A", cwd=mallory)
    git("commit", "-q", "-m", "docs", cwd=mallory)
    git("init", "-q", "--bare", "-b", "main", str(tmp_path / "origin.git"), cwd=tmp_path)
    git("push", "-q", str(tmp_path / "origin.git"), "main", cwd=mallory)
    git("clone", "-q", str(tmp_path / "origin.git"), str(tmp_path / "me"), cwd=tmp_path)
    me = tmp_path / "me"
    assert all((me / name).is_symlink() for name in links)
    ok(gm("add", "tests run with make spec", "--kind", "procedure", cwd=me))
    return me


def test_export_into_never_writes_through_a_committed_temporary_name(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"  # stands for ~/.bashrc: two levels up from the clone
    victim.write_text("precious\n")
    me = _cloned_with_links(tmp_path, {".AGENTS.md.git-mem-export": "../victim.txt"})
    (me / "AGENTS.md").write_text("# agents\n")
    ok(gm("export", "--into", "AGENTS.md", cwd=me))
    assert victim.read_text() == "precious\n"  # was the AGENTS.md block
    assert not (me / "AGENTS.md").is_symlink()
    assert "tests run with make spec" in (me / "AGENTS.md").read_text()


def test_export_into_refuses_a_committed_link_out_of_the_repository(tmp_path: Path) -> None:
    secret = tmp_path / "credentials"
    secret.write_text("aws_secret_access_key = hunter2\n")
    me = _cloned_with_links(tmp_path, {"AGENTS.md": "../credentials"})
    proc = gm("export", "--into", "AGENTS.md", cwd=me)
    assert proc.returncode == 2, proc.stderr
    assert "is a symlink to" in proc.stderr and "outside this repository" in proc.stderr
    assert (me / "AGENTS.md").is_symlink()  # was a file holding the credentials
    assert "hunter2" not in git("diff", cwd=me).stdout
    assert secret.read_text() == "aws_secret_access_key = hunter2\n"


def test_export_into_a_link_inside_the_work_tree_keeps_the_link(tmp_path: Path) -> None:
    me = _cloned_with_links(tmp_path, {"CLAUDE.md": "AGENTS.md"})
    (me / "AGENTS.md").write_text("# agents\n")
    ok(gm("export", "--into", "CLAUDE.md", cwd=me))
    assert (me / "CLAUDE.md").is_symlink()
    assert "tests run with make spec" in (me / "AGENTS.md").read_text()


def test_an_instruction_file_linking_into_the_git_dir_is_refused(tmp_path: Path) -> None:
    me = _cloned_with_links(tmp_path, {"AGENTS.md": ".git/config"})
    config = (me / ".git" / "config").read_text()
    for args in (("hooks", "install", "--agent", "cursor"), ("export", "--into", "AGENTS.md")):
        proc = gm(*args, cwd=me)
        assert proc.returncode == 2, (args, proc.stderr)
        assert "leads into the repository's git directory" in proc.stderr, proc.stderr
    assert (me / ".git" / "config").read_text() == config  # the block made it unreadable
    assert git("status", "--porcelain", cwd=me).stdout == ""  # nothing else written either


def test_skills_write_never_follows_a_committed_link_nor_a_key_out_of_the_folder(
        tmp_path: Path) -> None:
    # A teammate pushes two procedures that kept working and commits a link where the
    # first one's SKILL.md goes. 'git mem skills --write' overwrote the file the link
    # led to (the diff showed its content first); the second one's key, an absolute
    # path, made every 'git mem skills' an internal error.
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    mallory = init_repo(tmp_path / "mallory")
    (mallory / ".claude" / "skills" / "deploy").mkdir(parents=True)
    os.symlink("../../../../victim.txt", mallory / ".claude" / "skills" / "deploy" / "SKILL.md")
    git("add", "-A", cwd=mallory)
    git("commit", "-q", "-m", "skills", cwd=mallory)
    for key, text in (("deploy", "run make deploy then watch the dashboard"),
                      (str(tmp_path / "abs"), "rotate the logs with logrotate -f first")):
        mid = ok(gm("add", text, "--kind", "procedure", "--key", key, cwd=mallory)).stdout.strip()
        for _ in range(3):
            ok(gm("confirm", mid, "--worked", cwd=mallory))
    git("init", "-q", "--bare", "-b", "main", str(tmp_path / "origin.git"), cwd=tmp_path)
    git("remote", "add", "origin", str(tmp_path / "origin.git"), cwd=mallory)
    git("push", "-q", "origin", "main", cwd=mallory)
    ok(gm("sync", cwd=mallory))
    git("clone", "-q", str(tmp_path / "origin.git"), str(tmp_path / "me"), cwd=tmp_path)
    me = tmp_path / "me"
    ok(gm("sync", cwd=me))
    listed = ok(gm("skills", cwd=me)).stdout
    assert "precious" not in listed
    assert "deploy/SKILL.md is a symlink to" in listed and "outside this repository" in listed
    wrote = ok(gm("skills", "--write", cwd=me)).stdout
    assert victim.read_text() == "precious\n"
    assert (me / ".claude" / "skills" / "deploy" / "SKILL.md").is_symlink()
    assert "not written:" in wrote
    made = [p.relative_to(me).as_posix() for p in (me / ".claude" / "skills").rglob("SKILL.md")
            if not p.is_symlink()]
    # The key was an absolute path: its folder is made of letters, digits and hyphens,
    # one level under .claude/skills (whatever the temporary directory is called).
    assert len(made) == 1, made
    folder = made[0].split("/")[2]
    assert made[0] == f".claude/skills/{folder}/SKILL.md", made
    assert folder and all(c.isascii() and (c.isalnum() or c == "-") for c in folder), made
    assert not (tmp_path / "abs").exists()


def test_bootstrap_reads_no_instruction_file_through_a_committed_folder_link(
        tmp_path: Path) -> None:
    # adv35: a committed .cursor/rules linking to a folder outside (the person's
    # ~/.claude, say) made bootstrap propose the files there, and --yes shared them.
    private = tmp_path / "private"
    private.mkdir()
    (private / "CLAUDE.md").write_text("- Deploy through my own staging box staging.example\n")
    me = _cloned_with_links(tmp_path, {".cursor/rules": "../../private",
                                       "docs/adr": "../../private"})
    (me / "CONTRIBUTING.md").write_text("- Run make lint before every pull request\n")
    out = ok(gm("bootstrap", "--yes", cwd=me)).stdout
    assert "staging" not in out and "make lint" in out, out
    assert json.loads(ok(gm("recall", "staging box", "--json", cwd=me)).stdout)["data"]["hits"] == []


def test_a_committed_agent_config_nested_too_deep_is_refused_not_a_crash(
        tmp_path: Path) -> None:
    # adv35: JSON 200,000 levels deep in a committed .claude/settings.json or
    # .cursor/mcp.json made hooks install, mcp install and doctor internal errors
    # (RecursionError).
    deep = '{"hooks": ' + "[" * 200_000 + "]" * 200_000 + "}"
    me = _cloned_with_links(tmp_path, {}, {".claude/settings.json": deep,
                                           ".cursor/mcp.json": deep})
    for args in (("hooks", "install"), ("hooks", "uninstall"),
                 ("mcp", "install", "--client", "cursor")):
        proc = gm(*args, cwd=me)
        assert proc.returncode == 2 and "is not valid JSON" in proc.stderr, (args, proc.stderr)
    proc = gm("doctor", cwd=me)
    assert "internal error" not in proc.stderr + proc.stdout, proc.stderr
    assert git("status", "--porcelain", cwd=me).stdout == ""


def test_markers_in_a_committed_file_are_the_block_only_as_whole_lines_around_it(
        tmp_path: Path) -> None:
    # adv35: a stray begin line in a teammate's AGENTS.md made the second export
    # replace everything after it (their rules gone from the work tree); an end
    # marker quoted in prose made each export add another copy of the block.
    from gitmem.api.export import AGENTS_BEGIN, BEGIN, END

    agents = (f"# Agents\n\nKeep this line.\n{BEGIN}\nA stray begin above; keep this too.\n\n"
              "## Our rules\n- never push on a friday\n")
    other = f"# Other\n\nThe block ends at {END} and begins at {BEGIN}.\n"
    cursor = f"# Cursor\n{AGENTS_BEGIN}\n- keep this rule about tabs\n"
    me = _cloned_with_links(tmp_path, {}, {"AGENTS.md": agents, "OTHER.md": other,
                                           "CURSOR.md": cursor})
    for n in range(3):
        ok(gm("add", f"procedure number {n} runs the {n} suite", "--kind", "procedure",
              "--force", cwd=me))
        for name in ("AGENTS.md", "OTHER.md"):
            ok(gm("export", "--into", name, cwd=me))
    text = (me / "AGENTS.md").read_text()
    assert text.startswith(agents) and "never push on a friday" in text
    assert "procedure number 2" in text and text.count(END) == 1
    text = (me / "OTHER.md").read_text()
    assert text.startswith(other) and text.count(BEGIN) == 2 and "procedure number 2" in text
    # The agents block, for hooks install --agent cursor (AGENTS.md's stray begin line
    # is the export's; this file is the hooks' own instructions, put in place here).
    (me / "AGENTS.md").write_text(cursor)
    ok(gm("hooks", "install", "--agent", "cursor", cwd=me))
    assert (me / "AGENTS.md").read_text().count(AGENTS_BEGIN) == 2  # was: "already installed"
    ok(gm("hooks", "uninstall", "--agent", "cursor", cwd=me))
    assert (me / "AGENTS.md").read_text() == cursor


def test_a_committed_file_where_an_agent_folder_goes_is_refused_not_a_crash(
        tmp_path: Path) -> None:
    # adv35: a committed file named .claude or .github made hooks install an internal
    # error (FileExistsError, NotADirectoryError); export --into a folder that does not
    # exist was one too (FileNotFoundError, also before this run).
    me = _cloned_with_links(tmp_path, {}, {".claude": "not a folder\n",
                                           ".github": "not a folder either\n"})
    for agent, folder in (("claude-code", ".claude"), ("copilot", ".github")):
        proc = gm("hooks", "install", "--agent", agent, cwd=me)
        assert proc.returncode == 2, proc.stderr
        assert f"{folder} is a file, where" in proc.stderr, proc.stderr
    for into in (".claude/AGENTS.md", "no/such/folder/AGENTS.md"):
        proc = gm("export", "--into", into, cwd=me)
        assert proc.returncode == 2 and "internal error" not in proc.stderr, proc.stderr
    assert git("status", "--porcelain", cwd=me).stdout == ""


def test_review_of_adv35_git_dir_by_any_name_and_a_path_the_user_typed(tmp_path: Path) -> None:
    """The review of the first fix: the git dir was refused by its exact name only
    (.GIT is .git on a disk that folds case; a --separate-git-dir inside the tree has
    any name); a path the user typed through a link outside the tree (macOS /tmp) was
    refused as a teammate's; a name too long was an internal error."""
    from gitmem.api.validate import foreign_file

    repo = init_repo(tmp_path / "repo")
    for name in (".GIT/config", ".Git/config", ".git./config", ".git /config"):
        assert foreign_file(repo, repo / name) is not None, name
    git("init", "-q", "--separate-git-dir", str(repo / "gd"), str(repo / "sub"), cwd=repo)
    assert foreign_file(repo, repo / "gd" / "config") is not None
    assert foreign_file(repo, repo / "docs" / "AGENTS.md") is None
    ok(gm("add", "tests live in spec/, run with make spec", cwd=repo))
    real = tmp_path / "elsewhere"
    real.mkdir()
    (tmp_path / "alias").symlink_to(real)
    ok(gm("export", "--format", "agents-md", "--into", str(tmp_path / "alias" / "AGENTS.md"), cwd=repo))
    assert (real / "AGENTS.md").read_text().startswith("<!-- git-mem:export:begin")
    out = gm("export", "--format", "agents-md", "--into", "x" * 300 + ".md", cwd=repo)
    assert out.returncode == 2 and "internal error" not in out.stderr, out.stderr
    assert len([line for line in out.stderr.splitlines() if line.startswith("error:")]) == 1


def test_bootstrap_proposes_nothing_from_any_copy_of_our_block(tmp_path: Path) -> None:
    """Exports before the fix could leave several copies of the block; every one is ours."""
    repo = init_repo(tmp_path / "repo")
    from gitmem.api import export

    block = f"{export.BEGIN}\n- Always run make spec before pushing\n{export.END}\n"
    (repo / "AGENTS.md").write_text(f"# Agents\n\n{block}\nsome prose\n\n{block}")
    git("add", "AGENTS.md", cwd=repo)
    git("commit", "-q", "-m", "agents", cwd=repo)
    out = ok(gm("bootstrap", "--json", cwd=repo)).stdout
    assert "make spec" not in out, out


def test_markers_shown_in_a_code_block_are_left_alone(tmp_path: Path) -> None:
    """The review of adv35: a README or AGENTS.md that shows what the block looks like,
    inside a fenced code block above the real one, had the example rewritten by export
    and made hooks install say 'already installed'."""
    from gitmem.api.export import AGENTS_BEGIN, AGENTS_END, BEGIN, END

    example = (f"# Agents\n\nWhat git mem writes:\n\n```markdown\n{BEGIN}\n- an example rule\n{END}\n"
               f"{AGENTS_BEGIN}\nexample usage\n{AGENTS_END}\n```\n\nOur own rules follow.\n")
    me = _cloned_with_links(tmp_path, {}, {"AGENTS.md": example})
    ok(gm("add", "run the suite with make spec", "--kind", "procedure", "--force", cwd=me))
    for _ in range(2):
        ok(gm("export", "--into", "AGENTS.md", cwd=me))
    text = (me / "AGENTS.md").read_text()
    assert text.startswith(example), text
    assert text.count(BEGIN) == 2 and "make spec" in text.split("```", 2)[2]
    ok(gm("hooks", "install", "--agent", "cursor", cwd=me))
    assert (me / "AGENTS.md").read_text().count(AGENTS_BEGIN) == 2


def test_fences_are_read_as_commonmark_reads_them(tmp_path: Path) -> None:
    """A review of the fence mend: a 4-backtick example holding a 3-backtick fence was
    closed by the inner one (its markers then taken for ours: uninstall deleted the
    user's example), and a prose line starting with ```x``` opened a fence (a second
    block, stale for good)."""
    from gitmem.api.export import AGENTS_BEGIN, AGENTS_END, BEGIN, END

    example = (f"# Agents\n\n````markdown\n```\nx\n```\n{AGENTS_BEGIN}\nexample usage\n{AGENTS_END}\n"
               f"````\n\n```git mem``` is the tool.\n")
    me = _cloned_with_links(tmp_path, {}, {"AGENTS.md": example})
    ok(gm("hooks", "install", "--agent", "cursor", cwd=me))
    assert (me / "AGENTS.md").read_text().count(AGENTS_BEGIN) == 2
    ok(gm("hooks", "uninstall", "--agent", "cursor", cwd=me))
    assert (me / "AGENTS.md").read_text() == example
    ok(gm("add", "run the suite with make spec", "--kind", "procedure", "--force", cwd=me))
    ok(gm("export", "--into", "AGENTS.md", cwd=me))
    with (me / "AGENTS.md").open("a") as f:
        f.write("\n```python\nprint(1)\n```\n")
    for _ in range(2):
        ok(gm("export", "--into", "AGENTS.md", cwd=me))
    assert (me / "AGENTS.md").read_text().count(BEGIN) == 1 and END in (me / "AGENTS.md").read_text()


def test_skills_never_reads_a_committed_link_to_a_fifo_before_refusing_it(tmp_path: Path) -> None:
    """A review of ca3b980: the folder check read every candidate SKILL.md before the
    link check, so a committed link to /dev/zero ran the process out of memory and one
    to a FIFO (here: nothing ever writes it) blocked 'git mem skills' for good."""
    import subprocess

    from conftest import GIT_MEM

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    mallory = init_repo(tmp_path / "mallory")
    (mallory / ".claude" / "skills" / "deploy").mkdir(parents=True)
    os.symlink(str(fifo), mallory / ".claude" / "skills" / "deploy" / "SKILL.md")
    git("add", "-A", cwd=mallory)
    git("commit", "-q", "-m", "skills", cwd=mallory)
    mid = ok(gm("add", "run make deploy then watch the dashboard", "--kind", "procedure",
                "--key", "deploy", cwd=mallory)).stdout.strip()
    for _ in range(3):
        ok(gm("confirm", mid, "--worked", cwd=mallory))
    for args in (["skills"], ["skills", "--write"]):
        try:
            out = subprocess.run([GIT_MEM, *args], cwd=mallory, capture_output=True, text=True,
                                 timeout=60, check=False)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"git mem {' '.join(args)} blocked on a committed FIFO link") from None
        assert out.returncode == 0, out.stderr
        assert "deploy/SKILL.md is a symlink to" in out.stdout, out.stdout
    assert (mallory / ".claude" / "skills" / "deploy" / "SKILL.md").is_symlink()


def test_markers_and_fences_indented_four_columns_are_code(tmp_path: Path) -> None:
    """A review of ac3cba4: an example of the block indented four spaces (CommonMark:
    code) was taken for the block: install said 'already installed', uninstall deleted
    the example, export replaced it; a closing fence indented four spaces closed a fence."""
    from gitmem.api.export import AGENTS_BEGIN, AGENTS_END, BEGIN, END

    example = (f"# Agents\n\nWhat install adds looks like:\n\n    {AGENTS_BEGIN}\n    (the usage text)\n"
               f"    {AGENTS_END}\n\n\t{BEGIN}\n\t- an example rule\n\t{END}\n\n"
               f"```\n    ```\n{BEGIN}\n- shown in a fence\n{END}\n```\n\nOur own rule: never push on Fridays.\n")
    me = _cloned_with_links(tmp_path, {}, {"AGENTS.md": example})
    ok(gm("hooks", "install", "--agent", "cursor", cwd=me))
    text = (me / "AGENTS.md").read_text()
    assert text.startswith(example) and text.count(AGENTS_BEGIN) == 2, text
    ok(gm("hooks", "uninstall", "--agent", "cursor", cwd=me))
    assert (me / "AGENTS.md").read_text() == example
    ok(gm("add", "run the suite with make spec", "--kind", "procedure", "--force", cwd=me))
    for _ in range(2):
        ok(gm("export", "--into", "AGENTS.md", cwd=me))
    text = (me / "AGENTS.md").read_text()
    assert text.startswith(example) and text.count(BEGIN) == 3 and "make spec" in text, text


def test_a_crlf_instruction_file_keeps_its_line_endings(tmp_path: Path) -> None:
    """A review of ac3cba4: export --into, hooks install and uninstall read the file
    with newline translation and wrote LF: every line of a Windows file changed."""
    from gitmem.api.export import AGENTS_BEGIN, BEGIN

    before = "# Agents\r\n\r\nrule one\r\nrule two\r\n"
    me = _cloned_with_links(tmp_path, {}, {"AGENTS.md": before})
    assert (me / "AGENTS.md").read_bytes() == before.encode()
    ok(gm("hooks", "install", "--agent", "cursor", cwd=me))
    ok(gm("add", "run the suite with make spec", "--kind", "procedure", "--force", cwd=me))
    for _ in range(2):
        ok(gm("export", "--into", "AGENTS.md", cwd=me))
    raw = (me / "AGENTS.md").read_bytes()
    assert raw.startswith(before.encode()) and AGENTS_BEGIN.encode() in raw and BEGIN.encode() in raw
    assert raw.count(b"\n") == raw.count(b"\r\n"), raw
    assert raw.count(BEGIN.encode()) == 1
    ok(gm("hooks", "uninstall", "--agent", "cursor", cwd=me))
    raw = (me / "AGENTS.md").read_bytes()
    assert raw.startswith(before.encode()) and AGENTS_BEGIN.encode() not in raw
    assert raw.count(b"\n") == raw.count(b"\r\n"), raw


def test_a_file_of_lone_cr_line_endings_keeps_them(tmp_path: Path) -> None:
    """A review of the CRLF mend: a file whose lines end in a lone CR got an LF block."""
    before = "# Title\rline two\r"
    me = _cloned_with_links(tmp_path, {}, {"CR.md": before})
    for _ in range(2):
        ok(gm("export", "--into", "CR.md", cwd=me))
    raw = (me / "CR.md").read_bytes()
    assert raw.startswith(before.encode()) and b"\n" not in raw, raw
    from gitmem.api.export import BEGIN
    assert raw.count(BEGIN.encode()) == 1


def test_settings_put_in_place_after_the_check_are_never_followed_nor_waited_on(
        tmp_path: Path) -> None:
    """'hooks install' checked .claude/settings.json (inside the tree, a regular file),
    then read and wrote it by its path: whatever another process put there between the
    check and the write (a FIFO, a link out of the tree, a folder) was waited on,
    followed or written through. The read and the write now check what they open."""
    import pytest

    from gitmem.agents import settings
    from gitmem.errors import InvalidInput

    root = init_repo(tmp_path / "repo")
    path = root / ".claude" / "settings.json"
    path.parent.mkdir()
    os.mkfifo(path)  # put there after the check: nothing ever writes it
    with deadline(10), pytest.raises(InvalidInput, match="cannot read"):
        settings._load(path, settings.CLAUDE_HOOKS)
    path.unlink()

    victim = tmp_path / "victim.json"
    victim.write_text('{"theirs": 1}\n')
    os.symlink(victim, path)  # a link out of the tree, put there after the check
    with pytest.raises(InvalidInput, match="outside this repository"):
        settings._load(path, settings.CLAUDE_HOOKS, False, root)
    with pytest.raises(InvalidInput, match="outside this repository"):
        settings.write_json(path, {"hooks": {}}, root)
    assert victim.read_text() == '{"theirs": 1}\n' and path.is_symlink()
    path.unlink()

    path.mkdir()  # a folder
    with pytest.raises(InvalidInput, match="is not a regular file; nothing was changed"):
        settings.write_json(path, {"hooks": {}}, root)
    path.rmdir()

    # A new file gets the usual mode, an existing one keeps its own; a link inside the
    # tree is written through (it stays a link), and no temporary file is left.
    settings.write_json(path, {"hooks": {}}, root)
    assert path.stat().st_mode & 0o777 == 0o644
    path.chmod(0o640)
    settings.write_json(path, {"hooks": {"a": []}}, root)
    assert path.stat().st_mode & 0o777 == 0o640
    shared = root / "shared.json"
    path.rename(shared)
    os.symlink("../shared.json", path)
    assert settings.install(root).status == "installed"
    assert path.is_symlink() and "git mem hook" in shared.read_text()
    assert sorted(p.name for p in path.parent.iterdir()) == ["settings.json"]


def test_a_skill_file_put_in_place_after_the_check_is_never_followed_nor_waited_on(
        tmp_path: Path) -> None:
    import pytest

    from gitmem.api import skills
    from gitmem.errors import InvalidInput

    root = init_repo(tmp_path / "repo")
    path = root / ".claude" / "skills" / "deploy" / "SKILL.md"
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    with deadline(10):
        assert skills._read(root, path) is None
    path.unlink()
    victim = tmp_path / "victim.md"
    victim.write_text("precious\n")
    os.symlink(victim, path)
    assert skills._read(root, path) is None
    with pytest.raises(InvalidInput, match="outside this repository"):
        skills._write(root, path, "the skill\n")
    assert victim.read_text() == "precious\n" and path.is_symlink()
    path.unlink()
    skills._write(root, path, "the skill\n")
    assert path.read_text() == "the skill\n" and path.stat().st_mode & 0o777 == 0o644
    assert sorted(p.name for p in path.parent.iterdir()) == ["SKILL.md"]


def test_a_fifo_or_folder_where_a_skill_goes_gets_a_folder_of_its_own(tmp_path: Path) -> None:
    """A SKILL.md that is a FIFO, a link to one in the tree, or a folder was refused (the
    procedure never graduated) where a person's file there, or a link to one, moved the
    skill to a folder of its own: now all of them do, never reading or following it."""
    import subprocess

    from conftest import GIT_MEM

    for what in ("fifo", "link to a fifo", "folder"):
        repo = init_repo(tmp_path / what.replace(" ", "-"))
        skill = repo / ".claude" / "skills" / "deploy" / "SKILL.md"
        skill.parent.mkdir(parents=True)
        if what == "fifo":
            os.mkfifo(skill)
        elif what == "folder":
            skill.mkdir()
        else:
            os.mkfifo(repo / "pipe")
            os.symlink("../../../pipe", skill)
        mid = ok(gm("add", "run make deploy then watch the dashboard", "--kind", "procedure",
                    "--key", "deploy", cwd=repo)).stdout.strip()
        for _ in range(3):
            ok(gm("confirm", mid, "--worked", cwd=repo))
        try:
            out = subprocess.run([GIT_MEM, "skills", "--write", "--json"], cwd=repo,
                                 capture_output=True, text=True, timeout=60, check=False)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"git mem skills --write blocked on a {what}") from None
        assert out.returncode == 0, out.stderr
        (made,) = json.loads(out.stdout)["data"]
        assert made["action"] == "graduate" and made["written"], (what, made)
        folder = made["path"].split("/")[2]
        assert folder.startswith("deploy-") and (repo / made["path"]).is_file(), (what, made)
        assert "run make deploy" in (repo / made["path"]).read_text()
        if what == "folder":
            assert skill.is_dir()
        else:
            assert os.path.lexists(skill) and not skill.is_file()


def _graduated(repo: Path) -> dict[str, object]:
    """Record a procedure that worked three times, run 'skills --write': what it did."""
    import subprocess

    from conftest import GIT_MEM

    mid = ok(gm("add", "run make deploy then watch the dashboard", "--kind", "procedure",
                "--key", "deploy", cwd=repo)).stdout.strip()
    for _ in range(3):
        ok(gm("confirm", mid, "--worked", cwd=repo))
    out = subprocess.run([GIT_MEM, "skills", "--write", "--json"], cwd=repo,
                         capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 0, out.stderr
    (made,) = json.loads(out.stdout)["data"]
    assert isinstance(made, dict)
    return made


def test_a_link_to_nothing_where_a_skill_goes_is_never_written_through(tmp_path: Path) -> None:
    """A SKILL.md (or a skill's folder) linking to a path that does not exist: 'skills
    --write' created the folders and the file the link names, anywhere in the tree
    outside .git (a review, rev38b). Such a link is not ours: the skill takes a folder
    of its own, and the link's target is never created."""
    for where, target in (("file", "../../../nowhere/SKILL.md"), ("folder", "../../nowhere")):
        repo = init_repo(tmp_path / where)
        skill = repo / ".claude" / "skills" / "deploy" / "SKILL.md"
        link = skill if where == "file" else skill.parent
        link.parent.mkdir(parents=True)
        os.symlink(target, link)
        made = _graduated(repo)
        assert not (repo / "nowhere").exists(), (where, made)
        assert made["action"] == "graduate" and made["written"], (where, made)
        assert str(made["path"]).split("/")[2].startswith("deploy-"), (where, made)
        assert os.path.islink(link) and not os.path.exists(link)


def test_a_link_into_the_git_dir_where_a_skill_goes_is_refused_and_listed(
        tmp_path: Path) -> None:
    """A SKILL.md linking to a folder of .git (.git/refs) was refused and listed, as a
    link to .git/config is; since the FIFO-and-folder change it silently went to
    deploy-<hash> (a review, rev38b). Whatever it ends at, a link into the git dir is
    refused and listed."""
    for target in ("../../../.git/refs", "../../../.git/config", "../../../.git/nothing"):
        repo = init_repo(tmp_path / target.rsplit("/", 1)[1])
        skill = repo / ".claude" / "skills" / "deploy" / "SKILL.md"
        skill.parent.mkdir(parents=True)
        os.symlink(target, skill)
        made = _graduated(repo)
        assert made["action"] == "refused", (target, made)
        assert "git directory" in str(made["reason"]), (target, made)
        assert not (repo / ".git" / "nothing").exists()
        assert sorted(p.name for p in (repo / ".claude" / "skills").iterdir()) == ["deploy"]


def test_files_written_for_the_user_follow_the_umask_and_keep_their_mode_and_owner(
        tmp_path: Path) -> None:
    """The writes renamed a new file over the path (0600 until complete): a new AGENTS.md,
    settings or SKILL.md was then 0644 whatever the umask (0600 under umask 077 before; a
    review, rev38b). A new file now gets 0o666 less the umask; one already there keeps its
    mode, and its owner and group where the user may give them (here as root)."""
    import subprocess

    from conftest import GIT_MEM
    from gitmem.api import skills

    repo = init_repo(tmp_path / "new")
    out = subprocess.run(f"umask 077; exec '{GIT_MEM}' hooks install --agent cursor",
                         shell=True, cwd=repo, capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    for name in ("AGENTS.md", ".cursor/mcp.json"):
        assert (repo / name).stat().st_mode & 0o777 == 0o600, name
    skill = repo / ".claude" / "skills" / "deploy" / "SKILL.md"
    old = os.umask(0o077)
    try:
        skills._write(repo, skill, "the skill\n")
    finally:
        os.umask(old)
    assert skill.stat().st_mode & 0o777 == 0o600

    repo = init_repo(tmp_path / "old")
    mine = repo / "AGENTS.md"
    mine.write_text("# mine\n")
    mine.chmod(0o640)
    owner = (4242, 4343) if hasattr(os, "geteuid") and os.geteuid() == 0 else None
    if owner is not None:
        os.chown(mine, *owner)
    ok(gm("hooks", "install", "--agent", "cursor", cwd=repo))
    text, info = mine.read_text(), mine.stat()
    assert text.startswith("# mine\n") and "git mem" in text
    assert info.st_mode & 0o777 == 0o640
    if owner is not None:
        assert (info.st_uid, info.st_gid) == owner
    assert sorted(p.name for p in repo.iterdir() if p.name.startswith(".AGENTS")) == []


def test_a_fifo_where_agents_md_goes_is_named_as_what_it_is(tmp_path: Path) -> None:
    # (A review, rev38b: the hint for a FIFO or a folder said "replace the link".)
    repo = init_repo(tmp_path / "r")
    ok(gm("init", cwd=repo))
    os.mkfifo(repo / "AGENTS.md")
    with deadline(10):
        proc = gm("export", "--into", "AGENTS.md", cwd=repo)
    assert proc.returncode == 2 and "not a regular file" in proc.stderr, proc.stderr
    assert "replace the link" not in proc.stderr and "regular file of its own" in proc.stderr

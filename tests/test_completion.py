"""Shell completion for git-mem, and for 'git mem' through git's own bash completion."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import gm

GIT_BASH_COMPLETION = next((p for p in ("/usr/share/bash-completion/completions/git",
                                        "/etc/bash_completion.d/git") if Path(p).exists()), None)


def test_scripts_name_the_console_script(tmp_path: Path) -> None:
    bash = gm("completion", "bash", cwd=tmp_path)  # no repository needed
    assert bash.returncode == 0, bash.stderr
    assert "complete -o nosort -F _git_mem_completion git-mem" in bash.stdout
    assert "_git_mem ()" in bash.stdout and "_GIT_MEM_COMPLETE=bash_complete git-mem" in bash.stdout
    assert "compdef _git_mem_completion git-mem" in gm("completion", "zsh", cwd=tmp_path).stdout
    assert "complete --no-files --command git-mem" in gm("completion", "fish", cwd=tmp_path).stdout
    data = json.loads(gm("completion", "fish", "--json", cwd=tmp_path).stdout)["data"]
    assert data["shell"] == "fish" and "git-mem" in data["script"]
    assert gm("completion", "tcsh", cwd=tmp_path).returncode == 2


def test_the_console_script_completes(tmp_path: Path) -> None:
    out = gm(cwd=tmp_path, env={"COMP_WORDS": "git-mem re", "COMP_CWORD": "1",
                                "_GIT_MEM_COMPLETE": "bash_complete"})
    assert out.stdout.split() == ["plain,rebuild", "plain,recall", "plain,refresh", "plain,reject",
                                  "plain,rekey", "plain,related"]


@pytest.mark.skipif(GIT_BASH_COMPLETION is None or shutil.which("bash") is None,
                    reason="git's bash completion is not installed here")
def test_git_mem_tab_through_gits_bash_completion(tmp_path: Path) -> None:
    script = f"""
source {GIT_BASH_COMPLETION}
eval "$(git-mem completion bash)"
complete_line () {{
    read -ra COMP_WORDS <<< "$1"
    [[ "$1" == *" " ]] && COMP_WORDS+=("")
    COMP_CWORD=$((${{#COMP_WORDS[@]}} - 1)); COMP_LINE="$1"; COMP_POINT=${{#COMP_LINE}}
    COMPREPLY=()
    __git_wrap__git_main
    echo "${{COMPREPLY[*]}}"
}}
complete_line "git mem re"
complete_line "git mem hooks "
complete_line "git -C . mem recall --mode "
"""
    out = subprocess.run(["bash", "-c", script], cwd=tmp_path, capture_output=True, text=True,
                         env=dict(os.environ), check=False)
    assert out.stdout.splitlines() == ["rebuild recall refresh reject rekey related",
                                       "install uninstall",
                                       "hybrid lexical vector"], out.stderr

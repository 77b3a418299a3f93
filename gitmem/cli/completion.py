"""``git mem completion``: shell completion for git-mem, and for 'git mem' in bash.

click generates the script for the ``git-mem`` console script; git's own
bash completion knows nothing of it, so the bash script also defines
``_git_mem``, the function git's completion calls for ``git mem ...``.
"""

from __future__ import annotations

import click

from .app import COMPLETE_VAR, cli, emit, json_option

# git's own bash completion calls _git_<command> for 'git <command>'; this one
# hands 'git mem ...' to the git-mem completion above (words/cword are git's).
_GIT_MEM_BASH = """
_git_mem ()
{
    local i start=1 IFS=$'\\n' response completion type value
    for ((i=1; i < cword; i++)); do
        if [[ "${words[i]}" == mem ]]; then start=$i; break; fi
    done
    response=$(env COMP_WORDS="git-mem ${words[*]:start+1}" \\
        COMP_CWORD=$((cword - start)) %(var)s=bash_complete git-mem)
    COMPREPLY=()
    for completion in $response; do
        IFS=',' read type value <<< "$completion"
        if [[ $type == 'plain' ]]; then
            COMPREPLY+=("$value")
        elif [[ $type == 'file' || $type == 'dir' ]]; then
            COMPREPLY=()
            compopt -o default 2>/dev/null
        fi
    done
}
""" % {"var": COMPLETE_VAR}


@cli.command(name="completion")
@click.argument("shell", type=click.Choice(["bash", "zsh", "fish"]), default="bash")
@json_option
def completion(shell: str, as_json: bool) -> None:
    """Print the shell completion script for git-mem (and, in bash, for 'git mem').

    Load it from your shell's startup file. In bash it also defines _git_mem,
    which git's own completion calls, so 'git mem <TAB>' completes too.

    \b
    Example:
      eval "$(git mem completion bash)"          # in ~/.bashrc
      git mem completion fish > ~/.config/fish/completions/git-mem.fish
    """
    from click.shell_completion import get_completion_class

    cls = get_completion_class(shell)
    assert cls is not None
    script = cls(cli, {}, "git-mem", COMPLETE_VAR).source()
    if shell == "bash":
        script += _GIT_MEM_BASH
    emit("completion", as_json, {"shell": shell, "script": script}, script)

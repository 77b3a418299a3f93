"""``python -m gitmem`` runs the CLI, like the ``git-mem`` console script."""

from .cli import main

main()

#!/usr/bin/env bash
# A tour of the main job in a throwaway repository: add, recall, and the op-log
# as plain git sees it. Run by 'make demo' (git-mem must be on PATH).
set -euo pipefail

demo=$(mktemp -d "${TMPDIR:-/tmp}/git-mem-demo.XXXXXX")
trap 'rm -rf "$demo"' EXIT
cd "$demo"
export GIT_AUTHOR_NAME="${GIT_AUTHOR_NAME:-Demo User}" GIT_AUTHOR_EMAIL="${GIT_AUTHOR_EMAIL:-demo@example.com}"
export GIT_COMMITTER_NAME="$GIT_AUTHOR_NAME" GIT_COMMITTER_EMAIL="$GIT_AUTHOR_EMAIL"

run() { printf '\n$ %s\n' "$*"; "$@"; }

git init -q -b main .
echo "demo" > README && git add README && git commit -q -m "initial commit"

run git mem add "tests live in spec/, run them with make spec" --kind procedure --tag testing
run git mem add "the database is PostgreSQL 14, migrations in db/migrate" --kind fact --key db.engine
run git mem add "never push directly to main; open a pull request" --kind note --tag workflow
old=$(git mem add "the CI runs on Jenkins")
run git mem invalidate "$old" --reason "moved to GitHub Actions"

run git mem recall "how do I run the tests"
run git mem recall "which database do we use" --json
run git mem status

printf '\n# The op-log is plain git: one partition per author and clone under refs/memory/\n'
run git for-each-ref refs/memory/
run git log --format='%h %an %s' --glob=refs/memory
ref=$(git for-each-ref --format='%(refname)' refs/memory/ | head -n 1)
run git show "$ref:ops.jsonl"

printf '\n# The projection is disposable: delete it and the answers come back\n'
run rm -rf .git/mem/cache
run git mem recall "how do I run the tests"
printf '\ndemo OK (repository %s, removed on exit)\n' "$demo"

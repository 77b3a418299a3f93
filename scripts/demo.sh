#!/usr/bin/env bash
# A tour of the main job in a throwaway repository: add, recall, and the op-log
# as plain git sees it. Run by 'make demo' (git-mem must be on PATH).
set -euo pipefail

demo=$(mktemp -d "${TMPDIR:-/tmp}/git-mem-demo.XXXXXX")
pool=$(mktemp -d "${TMPDIR:-/tmp}/git-mem-demo-personal.XXXXXX")
trap 'rm -rf "$demo" "$pool"' EXIT
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

printf '\n# Facts change: a keyed fact, its history, and the memory as of a release tag\n'
export GIT_COMMITTER_DATE="2026-01-10T10:00:00Z"   # an injected clock, for a stable story
run git mem set ci.runner jenkins
git commit -q --allow-empty -m "release 1.4" && git tag v1.4
export GIT_COMMITTER_DATE="2026-03-01T10:00:00Z"
run git mem set ci.runner "github actions" --valid-from 2026-02-20
unset GIT_COMMITTER_DATE
run git mem get ci.runner
run git mem get ci.runner --as-of v1.4
run git mem history ci.runner
printf '\n# The same text again adds nothing new: it reinforces the memory already there\n'
run git mem add "tests live in spec/, run them with make spec" --kind procedure

printf '\n# What an agent reads first (hooks and the MCP server send the same)\n'
export GITMEM_PERSONAL_DIR="$pool"   # keep the demo out of your real personal pool
run git mem add "explain diffs before applying them" --kind procedure --personal
run git mem context --budget 300

printf '\n# The op-log is plain git: one partition per author and clone under refs/memory/\n'
run git for-each-ref refs/memory/
run git log --format='%h %an %s' --glob=refs/memory
ref=$(git for-each-ref --format='%(refname)' refs/memory/ | head -n 1)
run git show "$ref:ops.jsonl"

printf '\n# The projection is disposable: delete it and the answers come back\n'
run rm -rf .git/mem/cache
run git mem recall "how do I run the tests"
printf '\ndemo OK (repository %s, removed on exit)\n' "$demo"

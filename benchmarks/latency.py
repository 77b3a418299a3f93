#!/usr/bin/env python3
"""Latency benchmark: what an agent pays per call, and what sync costs.

    python benchmarks/latency.py                  # 1k, 10k, 100k memories + sync
    python benchmarks/latency.py --sizes 1000     # quicker
    python benchmarks/latency.py --skip-sync
    python benchmarks/latency.py --skip-sizes --skip-sync --retired 10000

Everything goes through the real path: memories are written as ops with
``git mem import`` (the bulk path), read by fresh ``git-mem`` processes exactly
as an agent's shell would run them, and synced through a real bare remote.
Prints one table per section; figures are wall-clock on this machine.

The machine may be shared and noisy, so each section also times a bare
``python -c pass`` (same interpreter, fresh process, same number of runs,
median) right next to its fresh-process figures, and prints every
fresh-process figure also as a multiple of it: ``133.0 (12.1x)``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import gitmem  # noqa: E402
from tables import table  # noqa: E402

GIT_MEM = shutil.which("git-mem", path=str(Path(sys.executable).parent)) or "git-mem"

NOUNS = ("cache database queue scheduler parser api gateway worker migration index test suite "
         "build pipeline deploy cluster token session config logger router handler schema "
         "service client server socket thread lock retry backoff timeout payload bucket "
         "release branch review lint formatter fixture mock benchmark profile").split()
VERBS = ("uses runs lives needs breaks owns calls retries caches stores reads writes "
         "validates rejects logs wraps spawns locks").split()
PLACES = ("src/ lib/ spec/ tests/ tools/ deploy/ docs/ scripts/ config/ internal/").split()
QUERIES = ["how do I run the tests", "where is the cache configured", "which database do we use",
           "how does deploy work", "why does the worker retry", "what owns the session token",
           "where do migrations live", "how is the api gateway configured"]


def _vocabulary(size: int = 4000, seed: int = 11) -> list[str]:
    """Made-up identifiers and words (syllable soup), stable across runs."""
    rnd = random.Random(seed)
    syll = ("ka ri to mu ne sa lo vi de pa go ru ti ma zo fe ba ki no shi ta "
            "ren lin dor mex quo vat sel tor gram pix").split()
    words = set()
    while len(words) < size:
        words.add("".join(rnd.choice(syll) for _ in range(rnd.randint(2, 4))))
    return sorted(words)


VOCAB = _vocabulary()


def synthetic(n: int, seed: int = 7) -> list[dict[str, object]]:
    """Developer-note-like memories: a dev-word skeleton plus Zipf-distributed
    project-specific words (module names, identifiers), so that, as in a real
    code base, a few words are common and most are rare. (A corpus built from
    a few dozen words only would make every query match a third of it.)"""
    rnd = random.Random(seed)
    weights = [1.0 / (r + 1) for r in range(len(VOCAB))]
    out = []
    for i in range(n):
        a, b = rnd.sample(NOUNS, 2)
        ids = rnd.choices(VOCAB, weights=weights, k=4)
        text = (f"the {a} in {rnd.choice(PLACES)}{ids[0]}.py {rnd.choice(VERBS)} {ids[1]} "
                f"before {b} {rnd.choice(VERBS)} {ids[2]}; see {ids[3]} (note {i})")
        out.append({"text": text, "kind": rnd.choice(["fact", "note", "procedure"]),
                    "tags": [rnd.choice(NOUNS)]})
    return out


def env_for(home: Path, name: str = "Bench", email: str = "bench@example.com") -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # measure what users run: cached bytecode
    env.update(HOME=str(home), GIT_CONFIG_NOSYSTEM="1", GIT_AUTHOR_NAME=name,
               GIT_AUTHOR_EMAIL=email, GIT_COMMITTER_NAME=name, GIT_COMMITTER_EMAIL=email,
               PATH=str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", ""))
    return env


def run(args: list[str], cwd: Path, env: dict[str, str], stdin: bytes | None = None) -> tuple[float, int, bytes]:
    """Run a command; return (seconds, peak RSS in MiB via /usr/bin/time, stdout)."""
    wrap = [TIME_BIN, "-f", "%M"] if TIME_BIN else []
    start = time.perf_counter()
    proc = subprocess.run([*wrap, *args], cwd=cwd, env=env, input=stdin,
                          capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed: {proc.stderr.decode()[-500:]}")
    last = proc.stderr.decode().strip().splitlines()[-1:] if wrap else []
    rss = int(last[0]) // 1024 if last and last[0].isdigit() else 0
    return elapsed, rss, proc.stdout


TIME_BIN = shutil.which("time", path="/usr/bin:/bin")


WORDS = ("redis", "memcached", "varnish", "squid", "nginx", "disk", "browser", "query",
         "layer", "plan", "lookup", "warm", "cold", "shared", "local", "edge", "origin",
         "object", "page", "result", "session", "token", "schema", "module", "build")


def timed(args: list[str], cwd: Path, env: dict[str, str], n: int) -> tuple[list[float], int]:
    """Wall time of n fresh runs, and the peak RSS (MiB) of one more run.

    The RSS run goes through /usr/bin/time: a child forked straight from this
    (large) benchmark process would report this process's pages as its own.
    """
    times = []
    for i in range(n):
        run_args = [a.replace("{i}", WORDS[i % len(WORDS)]) for a in args]
        start = time.perf_counter()
        proc = subprocess.run(run_args, cwd=cwd, env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE, check=False)
        times.append(time.perf_counter() - start)
        if proc.returncode != 0:
            raise SystemExit(f"{' '.join(run_args)} failed: {proc.stderr.decode()[-300:]}")
    peak = 0
    if TIME_BIN:
        rss_args = [a.replace("{i}", "peak") for a in args]
        proc = subprocess.run([TIME_BIN, "-f", "%M", *rss_args], cwd=cwd, env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
        last = proc.stderr.decode().strip().splitlines()[-1:]
        peak = int(last[0]) // 1024 if last and last[0].isdigit() else 0
    return times, peak


def pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def ms(x: float) -> str:
    return f"{x * 1000:.1f}"


PYTHON_PASS = [sys.executable, "-c", "pass"]


def baseline(cwd: Path, env: dict[str, str], n: int) -> float:
    """Median wall time of n fresh ``python -c pass`` runs (this interpreter):
    the reference every fresh-process figure of the same section is set against."""
    times, _ = timed(PYTHON_PASS, cwd, env, n)
    return pct(times, 50)


def vs(x: float, ref: float, unit: str = "ms", show_unit: bool = False) -> str:
    """A fresh-process figure (seconds) in ms or s, and its ratio to the
    ``python -c pass`` median: ``133.0 (12.1x)``, or ``133.0 ms (12.1x)``."""
    shown = ms(x) if unit == "ms" else f"{x:.2f}"
    return f"{shown}{' ' + unit if show_unit else ''} ({x / ref:.1f}x)"


def new_repo(base: Path, name: str, env: dict[str, str]) -> Path:
    repo = base / name
    subprocess.run(["git", "init", "-q", "-b", "main", str(repo)], check=True, env=env)
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "init"], cwd=repo, check=True, env=env)
    return repo


def warm_recalls(repo: Path, queries: list[str] | tuple[str, ...], n: int) -> list[float]:
    """Seconds of ``n`` recalls in this process, the projection open (after one to warm up)."""
    with gitmem.open(repo) as store:
        store.recall("warm up")
        warm = []
        for i in range(n):
            t0 = time.perf_counter()
            store.recall(queries[i % len(queries)])
            warm.append(time.perf_counter() - t0)
    return warm


def bench_index(repo: Path, n: int) -> list[str]:
    """The channels of one warm recall, in-process: lexical (FTS5), vector (exact
    scan) with and without numpy loaded, and the whole hybrid recall."""
    queries = QUERIES * 3
    out = [f"{n:,}"]
    with gitmem.open(repo) as store:
        store.recall("warm up")
        for mode in ("lexical", "vector", "hybrid"):
            times = []
            for q in queries:
                t0 = time.perf_counter()
                store.recall(q, k=10, mode=mode)
                times.append(time.perf_counter() - t0)
            out.append(ms(pct(times, 50)))
    # The same vector query in a process without numpy (what a fresh git-mem does).
    script = ("import sys, time, gitmem\n"
              "s = gitmem.open(sys.argv[1]); s.recall('warm up', mode='lexical')\n"
              "s.projection.numpy_from = 10 ** 12  # a one-shot process's scan, repeated\n"
              "ts = []\n"
              f"for q in {queries!r}:\n"
              "    t = time.perf_counter(); s.recall(q, k=10, mode='vector')\n"
              "    ts.append(time.perf_counter() - t)\n"
              "assert 'numpy' not in sys.modules\n"
              "print(sorted(ts)[len(ts) // 2])\n")
    proc = subprocess.run([sys.executable, "-c", script, str(repo)], capture_output=True,
                          text=True, check=False)
    out.append(ms(float(proc.stdout)) if proc.returncode == 0 else "n/a")
    return out


INDEX_ROWS: list[list[str]] = []


def bench_size(base: Path, n: int, reps: int) -> list[str]:
    home = base / f"home-{n}"
    home.mkdir()
    env = env_for(home)
    repo = new_repo(base, f"repo-{n}", env)
    data = "\n".join(json.dumps(r) for r in synthetic(n)).encode()
    import_s, _, _ = run([GIT_MEM, "import", "-"], repo, env, stdin=data)
    first_s, first_rss, _ = run([GIT_MEM, "recall", "warm up"], repo, env)  # builds the projection
    cache_mb = dir_mb(repo / ".git" / "mem" / "cache")
    log_mb = packed_log_mb(repo, env)
    # The reference, measured here, right next to the fresh-process figures.
    ref = baseline(repo, env, reps)
    recall_t, recall_rss = timed([GIT_MEM, "recall", QUERIES[0]], repo, env, reps)
    # A new memory every time (a repeat would only be a confirmation): the text
    # varies by one word, so each add also pays for the near-duplicate check.
    add_t, add_rss = timed([GIT_MEM, "add", "a fresh note about the {i} cache", "--force"],
                           repo, env, reps)
    context_t, _ = timed([GIT_MEM, "context"], repo, env, reps)
    hook_t = bench_pre_tool(repo, env, reps)
    end_t = bench_session_end(repo, env, reps)
    warm = warm_recalls(repo, QUERIES, max(reps * 5, 50))
    # A rebuild as a user runs it: a fresh `git mem rebuild` (in a process that has loaded
    # numpy, BLAS threads forbid the fork that embeds on the other core while it replays).
    rebuild_s, _, _ = run([GIT_MEM, "rebuild"], repo, env)
    # Refresh after 1k ops arrive from a teammate, as a pull brings them: a clone
    # imports them under another name and pushes them here; the next read replays
    # them, the gate included (ops from others are always scanned).
    mate = base / f"mate-{n}"
    subprocess.run(["git", "clone", "-q", str(repo), str(mate)], check=True, env=env)
    mate_env = env_for(home, "Teammate", "mate@example.com")
    more = "\n".join(json.dumps(r) for r in synthetic(1000, seed=n)).encode()
    run([GIT_MEM, "import", "-"], mate, mate_env, stdin=more)
    run([GIT_MEM, "push"], mate, mate_env)
    refresh_s, _, _ = run([GIT_MEM, "recall", QUERIES[1]], repo, env)
    INDEX_ROWS.append(bench_index(repo, n + 1000 + reps))
    return [f"{n:,}", ms(ref), vs(pct(recall_t, 50), ref), vs(pct(recall_t, 95), ref), str(recall_rss),
            ms(pct(warm, 50)), vs(pct(add_t, 50), ref), vs(pct(add_t, 95), ref), str(add_rss),
            vs(pct(context_t, 50), ref), vs(pct(hook_t, 50), ref), vs(pct(end_t, 50), ref),
            vs(first_s, ref, "s"), f"{rebuild_s:.2f}", vs(refresh_s, ref, "s"), f"{n / import_s:,.0f}",
            f"{n / (import_s + first_s):,.0f}", f"{cache_mb:.1f} ({cache_mb / max(log_mb, 0.01):.0f}x log)"]


SERVICES = ("deploy", "cache", "queue", "auth", "billing", "search", "mailer", "scheduler",
            "gateway", "storage", "metrics", "logging", "payments", "profile", "catalog",
            "orders", "reports", "export", "import", "notifier")
RETIRED_QUERIES = ["deploy timeout", "how many retries does the billing service do",
                   "scheduler", "what is the search service timeout", "retries",
                   "service timeout ms"]


def bench_retired(base: Path, n: int, reps: int) -> list[str]:
    """Warm recall where most memories are retired: 20 keys set n/20 times each, so
    all but 20 of the n vector rows are replaced values (each recall once selected
    them again and picked candidates through them: ~2x an ordinary store's time)."""
    home = base / f"home-retired-{n}"
    home.mkdir()
    env = env_for(home)
    repo = new_repo(base, f"retired-{n}", env)
    lines = [{"text": f"the {k} service timeout is {i} ms and retries {i % 5} times",
              "key": f"{k}.timeout"} for i in range(n // len(SERVICES)) for k in SERVICES]
    run([GIT_MEM, "import", "-"], repo, env, stdin="\n".join(map(json.dumps, lines)).encode())
    run([GIT_MEM, "recall", "warm up"], repo, env)  # builds the projection
    warm = warm_recalls(repo, RETIRED_QUERIES, max(reps * 5, 50))
    return [f"{len(lines):,} ({len(SERVICES)} keys, {len(lines) // len(SERVICES)} values each)",
            ms(pct(warm, 50)), ms(pct(warm, 95))]


def bench_existing(repo: Path, home: Path, reps: int) -> list[str]:
    """The per-call figures of a store built already (``--at``: a 1M-memory import
    takes ~10 minutes, so a store made once is measured again after each change).
    Build, rebuild, refresh and import figures are left out ("-"); the adds stay in
    the store."""
    env = env_for(home)
    n = 0
    with gitmem.open(repo) as store:
        store.recall("warm up")
        n = store.projection.size()
        warm = []
        for i in range(max(reps * 5, 50)):
            t0 = time.perf_counter()
            store.recall(QUERIES[i % len(QUERIES)])
            warm.append(time.perf_counter() - t0)
    ref = baseline(repo, env, reps)
    recall_t, recall_rss = timed([GIT_MEM, "recall", QUERIES[0]], repo, env, reps)
    add_t, add_rss = timed([GIT_MEM, "add", "a fresh note about the {i} cache", "--force"],
                           repo, env, reps)
    ref = (ref + baseline(repo, env, reps)) / 2  # before and after: the load moves
    INDEX_ROWS.append(bench_index(repo, n))
    return [f"{n:,} (at {repo.name})", ms(ref), vs(pct(recall_t, 50), ref),
            vs(pct(recall_t, 95), ref), str(recall_rss), ms(pct(warm, 50)),
            vs(pct(add_t, 50), ref), vs(pct(add_t, 95), ref), str(add_rss),
            "-", "-", "-", "-", "-", "-", "-", "-", f"{dir_mb(repo / '.git' / 'mem' / 'cache'):.1f}"]


def bench_pre_tool(repo: Path, env: dict[str, str], n: int) -> list[float]:
    """The agent's PreToolUse hook on a file that memories are anchored to: a fresh
    process per call, a new session each time (so it answers every time)."""
    src = repo / "src"
    src.mkdir(exist_ok=True)
    (src / "session.py").write_text("def login():\n    return True\n")
    subprocess.run(["git", "add", "src"], cwd=repo, env=env, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "code"], cwd=repo, env=env, check=True)
    for i in range(3):
        run([GIT_MEM, "add", f"login rule {i}: sessions are checked", "--path", "src/session.py",
             "--force"], repo, env)
    run([GIT_MEM, "recall", "login"], repo, env)  # the refresh is not the hook's cost
    times = []
    for i in range(n):
        payload = json.dumps({"session_id": f"bench-{i}-{time.time()}", "cwd": str(repo),
                              "hook_event_name": "PreToolUse", "tool_name": "Read",
                              "tool_input": {"file_path": str(src / "session.py")}}).encode()
        start = time.perf_counter()
        proc = subprocess.run([GIT_MEM, "hook", "pre-tool"], cwd=repo, env=env, input=payload,
                              capture_output=True, check=False)
        times.append(time.perf_counter() - start)
        if b"login rule" not in proc.stdout:
            raise SystemExit(f"pre-tool hook said nothing: {proc.stderr.decode()[-300:]}")
    return times


def bench_session_end(repo: Path, env: dict[str, str], n: int) -> list[float]:
    """The agent's session-end hook (Stop/SessionEnd/PreCompact): a fresh process per
    call, timed until it returns control; the capture it starts runs detached (a
    real transcript, a new session each time so every capture does the work)."""
    transcript = repo.parent / "bench-transcript.jsonl"
    fixture = ROOT / "fixtures" / "transcripts" / "claude-code.jsonl"
    transcript.write_text(fixture.read_text().replace("{ROOT}", str(repo)))
    times = []
    for i in range(n):
        payload = json.dumps({"session_id": f"bench-end-{i}-{time.time()}", "cwd": str(repo),
                              "transcript_path": str(transcript),
                              "hook_event_name": "SessionEnd"}).encode()
        start = time.perf_counter()
        proc = subprocess.run([GIT_MEM, "hook", "session-end"], cwd=repo, env=env, input=payload,
                              capture_output=True, check=False)
        times.append(time.perf_counter() - start)
        if proc.returncode != 0 or proc.stderr:
            raise SystemExit(f"session-end hook failed: {proc.stderr.decode()[-300:]}")
        time.sleep(0.5)  # let the detached capture finish: it is not the hook's cost
    return times


def dir_mb(path: Path) -> float:
    """Bytes on disk under a directory, in MiB (what a user's disk pays)."""
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20


def packed_log_mb(repo: Path, env: dict[str, str]) -> float:
    """The op-log's size once git has packed it: what the projection is set against."""
    subprocess.run(["git", "gc", "-q"], cwd=repo, env=env, check=False)
    out = subprocess.run(["git", "count-objects", "-v"], cwd=repo, env=env, capture_output=True,
                         text=True, check=False).stdout
    kib = sum(int(line.split()[1]) for line in out.splitlines() if line.startswith(("size:", "size-pack:")))
    return kib / 1024


def bench_sync(base: Path, authors: int = 20, per_author: int = 500, pack: int = 10) -> list[list[str]]:
    home = base / "home-sync"
    home.mkdir()
    env = env_for(home)
    bare = base / "team.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(bare)], check=True, env=env)
    writer = new_repo(base, "writer", env)
    subprocess.run(["git", "remote", "add", "origin", str(bare)], cwd=writer, check=True, env=env)
    subprocess.run(["git", "push", "-q", "origin", "main"], cwd=writer, check=True, env=env)
    for a in range(authors):
        aenv = env_for(home, f"Author {a}", f"author{a}@example.com")
        recs = synthetic(per_author, seed=1000 + a)
        run([GIT_MEM, "import", "-", "--pack-size", str(pack)], writer, aenv,
            stdin="\n".join(json.dumps(r) for r in recs).encode())
    run([GIT_MEM, "push"], writer, env)
    fresh = base / "fresh"
    subprocess.run(["git", "clone", "-q", str(bare), str(fresh)], check=True, env=env)
    ref = baseline(fresh, env, 5)  # the reference, next to this section's fresh processes
    pull_s, pull_rss, out = run([GIT_MEM, "pull", "--json"], fresh, env)
    refresh = json.loads(out)["data"]["refresh"]
    noop, _ = timed([GIT_MEM, "sync"], fresh, env, 5)
    total = authors * per_author
    return [
        ["python -c pass (p50 of 5)", "reference: bare interpreter start", f"{ms(ref)} ms", ""],
        ["pull into a fresh clone", f"{total:,} ops, {authors} authors, {total // pack:,} commits",
         vs(pull_s, ref, "s", show_unit=True), f"{pull_rss} MiB"],
        ["  of which replay (refresh)", f"{refresh['ops_applied']:,} ops applied",
         f"{refresh['seconds']:.2f} s", ""],
        ["no-op sync (p50 of 5)", "nothing moved", vs(pct(noop, 50), ref, show_unit=True), ""],
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000,10000,100000", help="corpus sizes, comma separated")
    ap.add_argument("--million", action="store_true",
                    help="also measure 1,000,000 generated memories (slow: tens of minutes, ~2 GB disk)")
    ap.add_argument("--at", action="append", default=[], metavar="REPO:HOME",
                    help="also measure the per-call figures of a store built already "
                         "(its repository and the HOME it was built with); repeatable")
    ap.add_argument("--reps", type=int, default=20, help="fresh-process runs per figure")
    ap.add_argument("--retired", type=int, default=0, metavar="N",
                    help="also measure warm recall on N memories that are mostly a few keys' "
                         "replaced values (20 keys set N/20 times each)")
    ap.add_argument("--skip-sync", action="store_true")
    ap.add_argument("--skip-sizes", action="store_true")
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="gitmem-bench-"))
    try:
        print(f"git-mem {gitmem.__version__}, python {sys.version.split()[0]}, {os.cpu_count()} cpus")
        if not args.skip_sizes:
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "gitmem")],
                           check=False, env=env_for(base))
            sizes = [int(n) for n in args.sizes.split(",")] + ([1_000_000] if args.million else [])
            rows = [bench_size(base, n, args.reps) for n in sizes if n]
            for at in args.at:
                repo, _, home = at.partition(":")
                rows.append(bench_existing(Path(repo), Path(home), args.reps))
            table("Per-call latency (ms unless noted; fresh process = a new git-mem per call;"
                  " (Nx) = multiple of the section's python -c pass p50)",
                  ["memories", "python -c pass p50", "recall p50", "recall p95", "recall RSS MiB", "warm recall p50",
                   "add p50", "add p95", "add RSS MiB", "context p50", "pre-tool hook p50",
                   "session-end hook p50", "first read (build) s", "git mem rebuild s",
                   "refresh +1k ops s", "import /s",
                   "import + first read /s", "cache MiB"], rows)
            table("Warm recall by channel (in-process p50, ms; the exact vector scan picks its "
                  "candidates with numpy when a process has it loaded, with heapq otherwise)",
                  ["memories", "lexical", "vector (numpy loaded)", "hybrid",
                   "vector (no numpy)"], INDEX_ROWS)
        if args.retired:
            table("Warm recall where most memories are retired (in-process, ms)",
                  ["memories", "warm recall p50", "warm recall p95"],
                  [bench_retired(base, args.retired, args.reps)])
        if not args.skip_sync:
            table("Sync through a bare remote", ["what", "size", "time", "peak RSS"], bench_sync(base))
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()

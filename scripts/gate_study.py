#!/usr/bin/env python3
"""Measure detect-secrets against the write-gate fixtures in fixtures/gate/.

Installs nothing. detect-secrets must be importable, e.g.:

    python3 -m venv /tmp/gate-venv && /tmp/gate-venv/bin/pip install detect-secrets
    /tmp/gate-venv/bin/python scripts/gate_study.py            # full report
    /tmp/gate-venv/bin/python scripts/gate_study.py --brief    # tables only

What it does, through detect-secrets' Python API (not the CLI):

* scans every physical line of every fixture text with ``detect_secrets.core.scan.scan_line``
  inside ``detect_secrets.settings.transient_settings`` for several configurations;
* re-applies the entropy limit to findings of the two high-entropy plugins, exactly as
  ``detect-secrets scan --string`` does when it prints them: in ad-hoc mode ``scan_line`` runs
  those plugins with ``enable_eager_search=True``, and when a line has no quoted string the
  eager path returns *every* base64/hex-charset word unfiltered (see the "raw" row);
* reports detection on secrets.jsonl, false positives on benign.jsonl, which plugin fired,
  the kinds detect-secrets misses entirely, import time and per-line cost;
* measures a recommended gate (d): the default plugins minus the two entropy plugins and
  IPPublicDetector, the default filters minus `is_line_allowlisted` (a `pragma: allowlist secret`
  in the text would switch the scan off) and `is_likely_id_string` (any "_id" earlier on the line
  hides a keyword finding), plus EXTRA_PATTERNS, an exact-value allowlist of documented example
  keys and a placeholder filter on KeywordDetector values;
* checks all fixtures against a reference implementation of the recommended Unicode rule;
* --also-scan FILE...: runs the recommended gate over other text (docs, commit messages).
"""
from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures" / "gate"

try:
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.core.scan import scan_line
    from detect_secrets.settings import Settings, get_plugins, transient_settings
except ImportError:  # pragma: no cover - environment problem, not a result
    sys.exit(
        "error: detect-secrets is not importable; hint: python3 -m venv /tmp/gate-venv && "
        "/tmp/gate-venv/bin/pip install detect-secrets, then run this script with "
        "/tmp/gate-venv/bin/python"
    )


# --------------------------------------------------------------------------------------------
# Fixtures
# --------------------------------------------------------------------------------------------

def load(name: str, fixtures: Path) -> list[dict]:
    rows = []
    with open(fixtures / name, encoding="utf-8") as fh:
        for n, raw in enumerate(fh, 1):
            row = json.loads(raw)
            assert isinstance(row.get("text"), str) and row["text"], f"{name}:{n}: text"
            assert isinstance(row.get("kind"), str) and row["kind"], f"{name}:{n}: kind"
            row["_where"] = f"{name}:{n}"
            rows.append(row)
    return rows


def lines_of(text: str) -> list[str]:
    # The gate sees one memory text; detect-secrets is line based, so scan each physical line.
    return text.splitlines() or [text]


# --------------------------------------------------------------------------------------------
# detect-secrets configurations
# --------------------------------------------------------------------------------------------

ALL_PLUGINS = sorted(cls.__name__ for cls in get_mapping_from_secret_type_to_class().values())
ENTROPY = ("Base64HighEntropyString", "HexHighEntropyString")
DEFAULT_FILTERS = sorted(set(Settings().filters) - Settings.DEFAULT_FILTERS)
# `# pragma: allowlist secret` in the text would switch detection off: a gate must not honour it.
# `is_likely_id_string` drops keyword findings on any line with "_id" before the value.
GATE_FILTERS = [
    f for f in DEFAULT_FILTERS
    if f not in ("detect_secrets.filters.allowlist.is_line_allowlisted",
                 "detect_secrets.filters.heuristic.is_likely_id_string")
]


def ds_config(drop=(), limits=None, filters=None) -> dict:
    limits = limits or {}
    cfg = {"plugins_used": [
        {"name": n, **({"limit": limits[n]} if n in limits else {})}
        for n in ALL_PLUGINS if n not in drop
    ]}
    if filters is not None:
        cfg["filters_used"] = [{"path": p} for p in filters]
    return cfg


# --------------------------------------------------------------------------------------------
# Recommended additions on top of detect-secrets (only for formats it has no plugin for,
# plus three generic rules for shapes its plugins get wrong in free text)
# --------------------------------------------------------------------------------------------

# The patterns, allowlist and placeholder rule live in the product (gitmem/gate.py);
# this study measures them.
sys.path.insert(0, str(ROOT))
from gitmem.gate import (  # noqa: E402
    DOCUMENTED_EXAMPLES,
    EXTRA_COMPILED,
    EXTRA_PATTERNS,
    PLACEHOLDER_VALUE,
    unicode_violations,
)

# --------------------------------------------------------------------------------------------
# Scanning
# --------------------------------------------------------------------------------------------

def ds_findings(line: str, plugins_by_type: dict, recheck_entropy: bool = True) -> list[tuple[str, str]]:
    out = []
    for secret in scan_line(line):
        plugin = plugins_by_type[secret.type]
        value = secret.secret_value or ""
        if recheck_entropy and hasattr(plugin, "entropy_limit"):
            if not plugin.calculate_shannon_entropy(value) > plugin.entropy_limit:
                continue
        out.append((type(plugin).__name__, value))
    return out


class Run:
    """One configuration applied to one corpus."""

    def __init__(self):
        self.hits: dict[str, list[tuple[str, str]]] = {}
        self.line_times: list[float] = []


def run_config(cfg: dict, rows: list[dict], *, recheck_entropy=True, extras=False,
               allowlist=False, placeholder_filter=False) -> Run:
    run = Run()
    with transient_settings(cfg):
        plugins_by_type = {p.secret_type: p for p in get_plugins()}
        list(scan_line("warm up"))  # plugin initialisation is not a per-line cost
        for row in rows:
            text = row["text"]
            if allowlist:
                for value in DOCUMENTED_EXAMPLES:
                    text = text.replace(value, "<documented-example>")
            found = []
            for line in lines_of(text):
                t0 = time.perf_counter()
                hits = ds_findings(line, plugins_by_type, recheck_entropy)
                if placeholder_filter:
                    hits = [(p, v) for p, v in hits
                            if not (p == "KeywordDetector" and PLACEHOLDER_VALUE.match(v))]
                run.line_times.append(time.perf_counter() - t0)
                found += hits
            if extras:
                t0 = time.perf_counter()
                for name, rx, _ in EXTRA_COMPILED:
                    m = rx.search(text)
                    if m:
                        found.append((f"extra:{name}", m.group(0)))
                run.line_times[-1] += time.perf_counter() - t0
            run.hits[row["_where"]] = found
    return run


# --------------------------------------------------------------------------------------------
# Unicode reference rule (what the fixtures are labelled against)
# --------------------------------------------------------------------------------------------

# (the Unicode rule: gitmem.gate.unicode_violations)


# --------------------------------------------------------------------------------------------
# Reporting
# --------------------------------------------------------------------------------------------

def short(text: str, n: int = 90) -> str:
    text = text.replace("\n", "\\n")
    return text if len(text) <= n else text[: n - 1] + "…"


def pct(a: int, b: int) -> str:
    return f"{a}/{b} ({100.0 * a / b:.1f}%)" if b else "0/0"


def import_cost(repeats: int = 5) -> tuple[float, float, list[str]]:
    code = (
        "import time; t0 = time.perf_counter()\n"
        "from detect_secrets.core.scan import scan_line\n"
        "from detect_secrets.settings import default_settings\n"
        "t1 = time.perf_counter()\n"
        "with default_settings():\n"
        "    list(scan_line('warm up'))\n"
        "t2 = time.perf_counter()\n"
        "print(t1 - t0, t2 - t1)\n"
    )
    imports, inits = [], []
    for _ in range(repeats):
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
        a, b = out.stdout.split()
        imports.append(float(a))
        inits.append(float(b))
    # where the time goes, from -X importtime (cumulative microseconds, inflated by the tracing)
    res = subprocess.run([sys.executable, "-X", "importtime", "-c", "import detect_secrets.core.scan"],
                         capture_output=True, text=True, check=True)
    cumulative: dict[str, int] = {}
    for ln in res.stderr.splitlines():
        m = re.match(r"import time:\s+\d+\s+\|\s+(\d+)\s+\|\s*(\S+)", ln)
        if m:
            cumulative[m.group(2)] = max(cumulative.get(m.group(2), 0), int(m.group(1)))
    total = max(cumulative.values())
    biggest = [f"{name} {cumulative[name] / 1000:.0f} ms of {total / 1000:.0f} ms"
               for name in ("requests", "multiprocessing", "yaml", "unidiff") if name in cumulative]
    return statistics.median(imports), statistics.median(inits), biggest


def summarise(label, run_s, run_b, secrets, benign, out, brief):
    hit_s = [r for r in secrets if run_s.hits[r["_where"]]]
    missed = [r for r in secrets if not run_s.hits[r["_where"]]]
    fps = [r for r in benign if run_b.hits[r["_where"]]]
    fps_nodoc = [r for r in fps if r["kind"] != "documented-example"]
    times = run_s.line_times + run_b.line_times
    row = {
        "label": label,
        "detected": pct(len(hit_s), len(secrets)),
        "fp": pct(len(fps), len(benign)),
        "fp_nodoc": pct(len(fps_nodoc), len(benign) - sum(r["kind"] == "documented-example" for r in benign)),
        "us_mean": 1e6 * statistics.mean(times),
        "us_p95": 1e6 * sorted(times)[int(0.95 * (len(times) - 1))],
    }
    if not brief:
        out.append(f"\n### {label}\n")
        out.append(f"detected {row['detected']}, false positives {row['fp']}")
        if missed:
            out.append("\nmissed secrets (kind: text):")
            for r in missed:
                out.append(f"  - {r['kind']}: {short(r['text'])}")
        if fps:
            out.append("\nfalse positives (kind [plugin: value]: text):")
            for r in fps:
                fired = sorted({f"{p}: {short(v, 28)}" for p, v in run_b.hits[r["_where"]]})
                out.append(f"  - {r['kind']} [{'; '.join(fired)}]: {short(r['text'], 70)}")
        by_plugin: dict[str, int] = {}
        for r in fps:
            for p in {p for p, _ in run_b.hits[r["_where"]]}:
                by_plugin[p] = by_plugin.get(p, 0) + 1
        if by_plugin:
            out.append("\nbenign lines refused, per plugin: " + ", ".join(
                f"{p} {n}" for p, n in sorted(by_plugin.items(), key=lambda kv: -kv[1])))
    return row, missed


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--fixtures", type=Path, default=FIXTURES)
    ap.add_argument("--brief", action="store_true", help="tables only, no per-line listings")
    ap.add_argument("--also-scan", nargs="*", type=Path, default=[], metavar="FILE",
                    help="also run the recommended gate over every line of these text files "
                         "(held-out prose: docs, commit messages) and list what it would refuse")
    args = ap.parse_args()

    secrets = load("secrets.jsonl", args.fixtures)
    benign = load("benign.jsonl", args.fixtures)
    inj = load("injection.jsonl", args.fixtures)
    inj_ok = load("injection_benign.jsonl", args.fixtures)
    uni = load("unicode.jsonl", args.fixtures)
    uni_ok = load("unicode_benign.jsonl", args.fixtures)

    import detect_secrets.__version__ as dsv
    out: list[str] = []
    out.append(f"# detect-secrets {dsv.VERSION} against {args.fixtures.relative_to(ROOT) if args.fixtures.is_relative_to(ROOT) else args.fixtures}")
    out.append(f"secrets.jsonl {len(secrets)} lines / {len({r['kind'] for r in secrets})} kinds; "
               f"benign.jsonl {len(benign)} lines / {len({r['kind'] for r in benign})} kinds; "
               f"injection {len(inj)}+{len(inj_ok)}; unicode {len(uni)}+{len(uni_ok)}")
    out.append(f"default plugins ({len(ALL_PLUGINS)}): {', '.join(ALL_PLUGINS)}")

    configs = [
        ("(a) default", ds_config(), {}),
        ("(b) default minus entropy plugins", ds_config(drop=ENTROPY), {}),
        ("(c) entropy limits raised (Base64 5.0, Hex 3.5)",
         ds_config(limits={"Base64HighEntropyString": 5.0, "HexHighEntropyString": 3.5}), {}),
        ("(d) RECOMMENDED: (b) minus IPPublic, gate filters, + extra patterns + documented-example allowlist",
         ds_config(drop=ENTROPY + ("IPPublicDetector",), filters=GATE_FILTERS),
         dict(extras=True, allowlist=True, placeholder_filter=True)),
        ("(e) (d) plus Base64HighEntropyString at 5.0",
         ds_config(drop=("HexHighEntropyString", "IPPublicDetector"),
                   limits={"Base64HighEntropyString": 5.0}, filters=GATE_FILTERS),
         dict(extras=True, allowlist=True, placeholder_filter=True)),
    ]

    rows = []
    # the raw ad-hoc behaviour, once, to show why the entropy re-check is needed
    raw_b = run_config(ds_config(), benign, recheck_entropy=False)
    raw_fp = sum(bool(v) for v in raw_b.hits.values())
    runs = {}
    for label, cfg, opts in configs:
        run_s = run_config(cfg, secrets, **opts)
        run_b = run_config(cfg, benign, **opts)
        runs[label] = (run_s, run_b)
        row, missed = summarise(label, run_s, run_b, secrets, benign, out, args.brief)
        rows.append(row)

    out.append("\n## Summary (a memory text is refused if any finding remains)\n")
    out.append("| configuration | secrets refused | benign refused | benign refused excl. documented-example | mean µs/line | p95 µs/line |")
    out.append("| --- | --- | --- | --- | --- | --- |")
    for r in rows:
        out.append(f"| {r['label']} | {r['detected']} | {r['fp']} | {r['fp_nodoc']} | {r['us_mean']:.0f} | {r['us_p95']:.0f} |")
    out.append(f"\nraw `scan_line` with default settings and no entropy re-check: benign refused "
               f"{pct(raw_fp, len(benign))} (every unquoted word is yielded by the entropy plugins)")

    # which kinds detect-secrets has nothing for: missed by (a) default (even with entropy)
    a_s = runs[configs[0][0]][0]
    b_s = runs[configs[1][0]][0]
    none_at_all = [r["kind"] for r in secrets if not a_s.hits[r["_where"]]]
    entropy_only = [r["kind"] for r in secrets if a_s.hits[r["_where"]] and not b_s.hits[r["_where"]]]
    out.append(f"\nkinds no default plugin catches, entropy included ({len(none_at_all)}): {', '.join(none_at_all)}")
    out.append(f"\nkinds caught only by the entropy plugins, i.e. no dedicated plugin ({len(entropy_only)}): "
               f"{', '.join(entropy_only)}")

    # what each extra pattern contributes on the secrets no detect-secrets plugin caught
    d_s = runs[configs[3][0]][0]
    sole: dict[str, list[str]] = {}
    shared: dict[str, list[str]] = {}
    for r in secrets:
        sources = {p for p, _ in d_s.hits[r["_where"]]}
        if not sources or not all(s.startswith("extra:") for s in sources):
            continue
        target = sole if len(sources) == 1 else shared
        for s in sources:
            target.setdefault(s[6:], []).append(r["kind"])
    out.append("\n## Extra patterns (recommended gate)\n")
    out.append("Per pattern: regex, reason, the secret kinds where it is the only detector, and the kinds "
               "where it fires together with other extra patterns (no detect-secrets plugin involved).\n")
    for name, rx, why in EXTRA_PATTERNS:
        out.append(f"- {name}: `{rx}`\n  reason: {why}\n  only detector for: {', '.join(sole.get(name, [])) or '-'}"
                   f"\n  also fires on: {', '.join(shared.get(name, [])) or '-'}")

    # other accept corpora must not trip the recommended secret scan either
    label_d, cfg_d, opts_d = configs[3]
    out.append("\n## Recommended secret scan on the other corpora (injection/unicode, accept sets)\n")
    for name, rows_ in (("injection_benign.jsonl", inj_ok), ("unicode_benign.jsonl", uni_ok)):
        run = run_config(cfg_d, rows_, **opts_d)
        bad = [r for r in rows_ if run.hits[r["_where"]]]
        out.append(f"- {name}: refused {pct(len(bad), len(rows_))}"
                   + "".join(f"\n  - {r['kind']} {run.hits[r['_where']]}: {short(r['text'])}" for r in bad))

    # unicode reference rule
    out.append("\n## Unicode reference rule against the fixtures\n")
    for name, rows_, expect in (("unicode.jsonl", uni, True), ("unicode_benign.jsonl", uni_ok, False),
                                ("secrets.jsonl", secrets, False), ("benign.jsonl", benign, False),
                                ("injection.jsonl", inj, False), ("injection_benign.jsonl", inj_ok, False)):
        wrong = [r for r in rows_ if bool(unicode_violations(r["text"])) != expect]
        verb = "refused" if expect else "accepted"
        out.append(f"- {name}: {verb} {pct(len(rows_) - len(wrong), len(rows_))}"
                   + "".join(f"\n  - {r['kind']} {unicode_violations(r['text'])}: {short(r['text'])}" for r in wrong))

    if args.also_scan:
        held = []
        for path in args.also_scan:
            for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
                if line.strip():
                    held.append({"text": line, "kind": "held-out", "_where": f"{path}:{n}"})
        run = run_config(cfg_d, held, **opts_d)
        bad = [r for r in held if run.hits[r["_where"]]]
        out.append("\n## Recommended gate on held-out text (--also-scan)\n")
        out.append(f"refused {pct(len(bad), len(held))} non-empty lines"
                   + "".join(f"\n  - {r['_where']} {sorted({p for p, _ in run.hits[r['_where']]})}: {short(r['text'])}"
                             for r in bad))

    imp, init, biggest = import_cost()
    out.append("\n## Cost\n")
    out.append(f"- import detect_secrets.core.scan + settings (fresh interpreter, median of 5): {imp * 1000:.0f} ms")
    out.append(f"- first scan_line under default_settings (plugin init): {init * 1000:.0f} ms")
    out.append(f"- under -X importtime: {'; '.join(biggest)} (requests is only used by the optional `verify` feature)")
    out.append(f"- per line: see the µs/line columns (warm, this machine, {len(secrets) + len(benign)} texts)")

    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())

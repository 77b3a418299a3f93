#!/usr/bin/env python3
"""A learned secret judge for the write gate, tried and NOT shipped: its training and its measurement.

    python scripts/train_gate_learned.py --loro                  # leave-one-round-out
    python scripts/train_gate_learned.py --loro --before TREE:5  # and the rules as they were before round 5
    python scripts/train_gate_learned.py --timing                # what scoring a text costs
    python scripts/train_gate_learned.py --write PATH            # the weights, trained on every dev row

What was tried (issue 13, docs/security.md "Tried and not shipped"): a linear model that
scores each candidate token of a text (a token that mixes letters with digits or symbols,
or stands within four words after a credential word) over hashed features meant to carry
over between authors: the token's shape (length, character classes, bits per character
under gitmem/gate/naturalness.py, the shape of its first characters), the words around it
and whether they name a credential (stems in ~30 languages), the character 4-grams of the
24 characters before it, what separates it from the word before (``=``, ``: ``, a quote, a
flag), and its line's structure (key = value, a command line, a URL). A text's score is
its best candidate's. It would refuse a text the rules pass when the score reaches
ADD_AT, and could veto a text whose only findings come from the generic rule families
(VETOABLE) when the score is low.

Trained on fixtures/gate/figures/{secrets,notes}.dev.jsonl only (never a hold-out), plus
ordinary text as negatives: 3,000 LoCoMo chat turns (/work/shared/data/locomo), 4,000
docstring paragraphs and 3,000 lines of code naming a credential from this Python's
standard library (fixed seeded samples). Multiple-instance learning: a secret text holds
one secret among ordinary tokens, so after a first pass in which every candidate of a
secret text counts 1/n, only its best-scoring candidate is a positive (three rounds).
Plain numpy, full-batch Adam, fixed order: the same data gives the same weights, which
are stored as 2**15 16-bit integers (64 KB) and summed as integers when scoring.

``--loro``: for each round k of the dev parts ("round" field; none means 1), train on the
other rounds and five sixths of the ordinary text, then count round k's dev secrets
caught and notes refused by the current rules alone and by the rules with the judge, and
the held-out sixth of the ordinary text. The current rules were tuned on every dev round,
so ``--before TREE:K`` also scores round k with the rules as they were before round k was
tuned on (TREE: a checkout of that commit, e.g. ``git worktree add --detach /tmp/g5
b5bcd0b^`` for round 5, ``df9f2da^`` for round 6): that is how the rules meet text they
were not written for.
"""

from __future__ import annotations

import argparse
import ast
import glob
import json
import os
import random
import re
import statistics
import subprocess
import sys
import sysconfig
import time
import zlib
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gitmem.gate import naturalness  # noqa: E402
from gitmem.gate.secrets import scan_secrets  # noqa: E402

FIGURES = ROOT / "fixtures" / "gate" / "figures"
LOCOMO = Path("/work/shared/data/locomo")
BITS = 15
D = 1 << BITS
_MASK = D - 1
SCALE = 1024  # a weight is stored as round(w * SCALE) in 16 bits
L2 = 3e-4
STEPS = 150
MIL_ROUNDS = 3
# The operating point, chosen on --loro: the lowest threshold (steps of 500) at which the
# judge adds under 0.5% refusals to the dev notes; no veto (at any threshold it cost as many
# secrets as it saved notes).
ADD_AT = 5000
VETO_BELOW = -(1 << 30)
# The generic rule families: a value after a credential word, prose, a token's shape.
VETOABLE = frozenset({
    "keyword-assignment", "password-in-prose", "random-token", "password-setting",
    "generated-password", "Secret Keyword", "chosen-password-shape", "pin-code",
    "password-option", "hex-near-key", "credential-column", "password-verb-final",
    "positional-credentials", "option-value-in-a-list", "passphrase-words", "quoted-passphrase",
    "login-password-pair", "email-password-pair", "account-password-pair", "password-literal-pair",
    "credential-call", "credential-literal-in-call", "default-account-password",
    "command-line-password", "admin-tool-password", "network-password-pair",
    "host-user-password-call", "set-key-call", "client-constructor-secret",
})
_CODE_KW = re.compile(r"(?i)pass|pwd|token|secret|key|auth|login|cred")

# A piece: a run of characters that is neither space nor quote, bracket, comma, '=' or '|'.
_PIECE = re.compile(r"[^\s\"'`,;()\[\]{}<>=|]+")
# Words that name a credential, in the languages of the corpus (stems: a word containing one).
_KW_STEMS = (
    "pass", "pwd", "token", "secret", "cred", "auth", "login", "key", "senha", "contrase",
    "clave", "passw", "kennw", "wachtw", "hasł", "hasl", "пароль", "парол", "密码", "密碼",
    "パスワード", "비밀번호", "şifre", "sifre", "parol", "lozink", "heslo", "jelsz", "sandi",
    "salasan", "lösen", "losen", "adgangsk", "passord", "κωδικ", "סיסמ", "كلمة", "رمز",
    "पासवर्ड", "รหัส", "mật", "mdp", "geheim", "segred", "segret", "secreto", "ключ", "키",
    "暗証", "口令", "apikey", "bearer", "cookie", "session", "salt", "seed", "pin",
)
_KW_EXACT = frozenset({"pw", "pin", "pwd", "pass", "psw", "pword", "code", "codes", "sk", "u", "p"})


def _word(piece: str) -> str:
    return piece.strip(".:!?*#~-_/\\").lower()[:16]


def _is_kw(w: str) -> bool:
    return w in _KW_EXACT or any(s in w for s in _KW_STEMS)


def _classes(tok: str) -> str:
    lo = up = dg = sy = na = False
    for ch in tok:
        if "a" <= ch <= "z":
            lo = True
        elif "A" <= ch <= "Z":
            up = True
        elif "0" <= ch <= "9":
            dg = True
        elif ch.isascii():
            sy = True
        else:
            na = True
    return f"{'l' if lo else ''}{'u' if up else ''}{'d' if dg else ''}{'s' if sy else ''}{'n' if na else ''}"


def _len_bucket(n: int) -> str:
    for i, edge in enumerate((5, 7, 9, 12, 16, 24, 40)):
        if n <= edge:
            return str(i)
    return "7"


def _candidate(tok: str, near_kw: bool) -> bool:
    """Whether ``tok`` is worth scoring: it mixes classes, or a credential word stands near."""
    n = len(tok)
    if n < 4 or n > 400:
        return False
    if near_kw:
        return True
    if n < 6:
        return False
    alpha = digit = other = False
    for ch in tok:
        if ch.isalpha():
            alpha = True
        elif ch.isdigit():
            digit = True
        else:
            other = True
    return alpha + digit + other >= 2


def features(text: str) -> list[list[str]]:
    """The feature strings of each candidate token of ``text`` (training and scoring share it)."""
    pieces = [(m.start(), m.end(), m.group()) for m in _PIECE.finditer(text)]
    words = [_word(p) for _, _, p in pieces]
    kws = [_is_kw(w) for w in words]
    out: list[list[str]] = []
    for i, (start, end, tok) in enumerate(pieces):
        near = any(kws[j] for j in range(max(0, i - 4), i))
        if not _candidate(tok, near):
            continue
        cls = _classes(tok)
        bits = naturalness.bits_per_char(tok)
        bb = str(min(int(bits * 2), 16))
        lb = _len_bucket(len(tok))
        prev_end = pieces[i - 1][1] if i else 0
        sep = text[prev_end:start][-3:].replace("\n", "N").replace("\t", " ")
        ls = text.rfind("\n", 0, start) + 1
        le = text.find("\n", end)
        line = text[ls:le if le >= 0 else len(text)]
        f = [f"c:{cls}", f"l:{lb}", f"b:{bb}", f"cl:{cls}:{lb}", f"cb:{cls}:{bb}", f"s:{sep}",
             f"sc:{sep}:{cls}", f"sb:{sep}:{bb}"]
        if tok.isdigit():
            f.append(f"dig:{lb}")
        if ":" in tok:
            f.append("has:colon" + ("@" if "@" in tok else ""))
        if "://" in tok:
            f.append("url")
        elif "@" in tok:
            f.append("at")
        if kws[i]:
            f.append("selfkw")
        kwd = 0
        for d in (1, 2, 3, 4):
            j = i - d
            if j < 0:
                f.append(f"p{d}:^")
                break
            f.append(f"p{d}:{words[j]}")
            if kws[j]:
                kwd = kwd or d
        if kwd:
            f += [f"kw:{kwd}", f"kwc:{kwd}:{cls}", f"kwb:{kwd}:{bb}", f"kwl:{kwd}:{lb}",
                  f"kws:{kwd}:{sep}"]
        else:
            f += [f"nokw:{cls}:{bb}"]
        if i + 1 < len(pieces):
            f.append(f"n1:{words[i + 1]}")
            if kws[i + 1]:
                f.append("nkw")
        else:
            f.append("n1:$")
        if i and pieces[i - 1][2].startswith("-"):
            f.append(f"flag:{cls}")
        head = line.lstrip()
        if re.match(r"(?:export\s+|set\s+)?[\w.-]+\s*[:=]", head):
            f.append("line:kv")
        if re.match(r"[$#>]|sudo\b|[a-z][\w-]*\s+-", head):
            f.append("line:cmd")
        if "://" in line:
            f.append("line:url")
        if any(kws[j] for j in range(max(0, i - 12), i)):
            f.append("kw12")
        for j in range(max(0, i - 8), min(len(pieces), i + 4)):
            if j != i and len(words[j]) > 1 and not any(ch.isdigit() for ch in words[j]):
                f.append(f"w:{words[j]}")
        before = text[max(0, start - 24):start].lower()
        f += [f"g:{before[j:j + 4]}" for j in range(len(before) - 3)]
        head_shape = re.sub(r"[a-z]+", "a", re.sub(r"[A-Z]+", "A", re.sub(r"[0-9]+", "0", tok[:6])))
        f.append(f"h:{head_shape}")
        out.append(f)
    return out


def hashed(feats: list[str]) -> list[int]:
    return [zlib.crc32(s.encode()) & _MASK for s in feats]


def score(qw: np.ndarray, qb: int, cands: list[list[int]]) -> int:
    """A text's score from its candidates' hashed features: integer sums, the best one."""
    return max((qb + int(sum(int(qw[h]) for h in hs)) for hs in cands), default=-(1 << 30))


def ordinary_text() -> list[str]:
    turns: list[str] = []
    for path in sorted(LOCOMO.glob("conv-*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        for key in sorted(data):
            if key.startswith("session_") and isinstance(data[key], list):
                turns += [t["text"] for t in data[key]]
    random.Random(1).shuffle(turns)
    std = sysconfig.get_paths()["stdlib"]
    paras: list[str] = []
    code: list[str] = []
    for name in sorted(glob.glob(std + "/*.py")) + sorted(glob.glob(std + "/*/*.py")):
        if "/test" in name or "site-packages" in name:
            continue
        try:
            source = Path(name).read_text(encoding="utf-8")
            # lines of code that name a credential: what a note quoting code looks like
            code += [ln.strip() for ln in source.splitlines()
                     if 12 <= len(ln.strip()) <= 200 and _CODE_KW.search(ln)]
            tree = ast.parse(source)
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)):
                doc = ast.get_docstring(node)
                if doc:
                    paras += [p.strip() for p in doc.split("\n\n") if 20 <= len(p.strip()) <= 400]
    random.Random(2).shuffle(paras)
    random.Random(3).shuffle(code)
    return turns[:3000] + paras[:4000] + code[:3000]


def load() -> list[dict]:  # type: ignore[type-arg]
    rows = []
    for corpus, label in (("secrets", 1), ("notes", 0)):
        for line in (FIGURES / f"{corpus}.dev.jsonl").read_text(encoding="utf-8").splitlines():
            if line:
                r = json.loads(line)
                rows.append({"text": r["text"], "label": label, "round": str(r.get("round", 1)),
                             "src": corpus})
    for i, text in enumerate(ordinary_text()):
        rows.append({"text": text, "label": 0, "round": f"ord{i % 6 + 1}", "src": "ordinary"})
    for r in rows:
        r["cands"] = [hashed(f) for f in features(r["text"])]
    return rows


def sigmoid(z: np.ndarray) -> np.ndarray:
    out: np.ndarray = 1.0 / (1.0 + np.exp(-np.clip(z, -30, 30)))
    return out


def fit(rows: list[dict]) -> tuple[np.ndarray, float]:  # type: ignore[type-arg]
    """Weights and bias from rows' candidates (multiple-instance, see the docstring)."""
    cand_text, cols, cand_rows = [], [], []
    c = 0
    for t, r in enumerate(rows):
        for h in r["cands"]:
            cand_text.append(t)
            cols += h
            cand_rows += [c] * len(h)
            c += 1
    n = c
    cand_text_a = np.array(cand_text)
    cols_a, rows_a = np.array(cols), np.array(cand_rows)
    labels = np.array([r["label"] for r in rows])[cand_text_a] if n else np.zeros(0)
    counts = np.bincount(cand_text_a, minlength=len(rows))
    w, b = np.zeros(D), 0.0

    def scores() -> np.ndarray:
        return np.bincount(rows_a, weights=w[cols_a], minlength=n) + b

    # first pass: every candidate of a secret text counts 1/(its count)
    sw = np.where(labels == 1, 1.0 / np.maximum(counts[cand_text_a], 1), 1.0)
    for rnd in range(MIL_ROUNDS + 1):
        if rnd:
            s = scores()
            best = np.full(len(rows), -np.inf)
            np.maximum.at(best, cand_text_a, s)
            top = (s == best[cand_text_a])
            # one positive per secret text: its best candidate (the first of ties)
            first = np.zeros(n, dtype=bool)
            seen: set[int] = set()
            for i in np.nonzero(top & (labels == 1))[0]:
                t = int(cand_text_a[i])
                if t not in seen:
                    seen.add(t)
                    first[i] = True
            sw = np.where(labels == 1, first.astype(float), 1.0)
        pos_total = sw[labels == 1].sum()
        neg_total = sw[labels == 0].sum()
        sw_bal = np.where(labels == 1, sw / pos_total, sw / neg_total)
        m_w, v_w, m_b, v_b = np.zeros(D), np.zeros(D), 0.0, 0.0
        lr, b1, b2 = 0.05, 0.9, 0.999
        for step in range(1, STEPS + 1):
            p = sigmoid(scores())
            g = (p - labels) * sw_bal
            gw = np.bincount(cols_a, weights=g[rows_a], minlength=D) + L2 * w
            gb = g.sum()
            m_w = b1 * m_w + (1 - b1) * gw
            v_w = b2 * v_w + (1 - b2) * gw * gw
            m_b = b1 * m_b + (1 - b1) * gb
            v_b = b2 * v_b + (1 - b2) * gb * gb
            corr = np.sqrt(1 - b2 ** step) / (1 - b1 ** step)
            w -= lr * corr * m_w / (np.sqrt(v_w) + 1e-8)
            b -= lr * corr * m_b / (np.sqrt(v_b) + 1e-8)
    return w, b


def quantise(w: np.ndarray, b: float) -> tuple[np.ndarray, int]:
    return np.clip(np.round(w * SCALE), -32767, 32767).astype("<i2"), int(round(b * SCALE))


def verdict(findings: list[str], s: int, add_at: int = ADD_AT, veto_below: int = VETO_BELOW) -> bool:
    """Whether the rules (their findings' kinds) with the judge (score ``s``) refuse a text."""
    if not findings:
        return s >= add_at
    return not (all(k in VETOABLE for k in findings) and s < veto_below)


_OLD_RULES = """
import json, sys
from gitmem import gate
for line in sys.stdin:
    fs = gate.scan(json.loads(line))
    print(json.dumps([f.kind if f.category == "secret" else "(" + f.category + ")" for f in fs]))
"""


def rules_of(tree: str, texts: list[str]) -> list[list[str]]:
    """Every text's finding kinds under the gate checked out at ``tree``."""
    env = dict(os.environ, PYTHONPATH=tree)
    out = subprocess.run([sys.executable, "-c", _OLD_RULES], input="\n".join(map(json.dumps, texts)),
                         capture_output=True, text=True, env=env, cwd=tree, check=True).stdout
    return [json.loads(line) for line in out.splitlines()]


def loro(rows: list[dict], before: list[str]) -> None:  # type: ignore[type-arg]
    for r in rows:
        r["rules"] = sorted({f.kind for f, _ in scan_secrets(r["text"])})
    rounds = sorted({r["round"] for r in rows if r["src"] == "secrets"})
    oof: dict[int, int] = {}
    for k in rounds:
        w, b = fit([r for r in rows if r["round"] not in (k, f"ord{k}")])
        qw, qb = quantise(w, b)
        oof.update({i: score(qw, qb, r["cands"]) for i, r in enumerate(rows)
                    if r["round"] in (k, f"ord{k}")})

    def part(src: str, k: str) -> list[int]:
        want = f"ord{k}" if src == "ordinary" else k
        return [i for i in oof if rows[i]["src"] == src and (k == "all" or rows[i]["round"] == want)]

    def count(ix: list[int], rules: dict[int, list[str]], judge: bool) -> str:
        hit = sum(verdict(rules[i], oof[i]) if judge else bool(rules[i]) for i in ix)
        return f"{hit}/{len(ix)} ({100 * hit / max(len(ix), 1):.1f}%)"

    now = {i: r["rules"] for i, r in enumerate(rows)}
    print(f"Leave one round out: judge adds at >= {ADD_AT}, veto {'off' if VETO_BELOW < -(1 << 29) else VETO_BELOW}")
    print("| round | secrets: rules | rules+judge | notes: rules | rules+judge | ordinary: rules | rules+judge |")
    print("|---|---|---|---|---|---|---|")
    for k in rounds + ["all"]:
        cells = [count(part(src, k), now, judge) for src in ("secrets", "notes", "ordinary")
                 for judge in (False, True)]
        print(f"| {k} | " + " | ".join(cells) + " |")
    print("\nThe judge alone: texts it would refuse, by threshold (rules passed them or not)")
    print("| add at | dev secrets | dev notes | dev notes the rules pass | ordinary |")
    print("|---|---|---|---|---|")
    for t in range(3000, 8001, 500):
        sec, nts, ordn = part("secrets", "all"), part("notes", "all"), part("ordinary", "all")
        print(f"| {t} | {sum(oof[i] >= t for i in sec)}/{len(sec)} | {sum(oof[i] >= t for i in nts)}/{len(nts)}"
              f" | {sum(oof[i] >= t and not now[i] for i in nts)}/{len(nts)}"
              f" | {sum(oof[i] >= t for i in ordn)}/{len(ordn)} |")
    for spec in before:
        tree, k = spec.rsplit(":", 1)
        ix = part("secrets", k) + part("notes", k) + part("ordinary", k)
        old = dict(zip(ix, rules_of(tree, [rows[i]["text"] for i in ix])))
        print(f"\nRound {k} under the rules before it was tuned on ({tree}), judge trained without it")
        print("| add at | veto below | secrets | notes | ordinary |")
        print("|---|---|---|---|---|")
        for add_at in (ADD_AT - 1000, ADD_AT, ADD_AT + 1000, 1 << 30):
            for veto in (-(1 << 30), -3000, 0):
                cells = []
                for src in ("secrets", "notes", "ordinary"):
                    p = part(src, k)
                    # an injection or Unicode finding is never the judge's to veto
                    hit = sum(any(x.startswith("(") for x in old[i])
                              or verdict(old[i], oof[i], add_at, veto) for i in p)
                    cells.append(f"{hit}/{len(p)} ({100 * hit / max(len(p), 1):.1f}%)")
                print(f"| {'rules only' if add_at == 1 << 30 else add_at} | "
                      f"{'off' if veto < -(1 << 29) else veto} | " + " | ".join(cells) + " |")


def timing(rows: list[dict]) -> None:  # type: ignore[type-arg]
    """Mean microseconds a text for the judge (features and score) and for gate.scan."""
    from gitmem import gate

    w, b = fit(rows)
    qw, qb = quantise(w, b)
    notes = [r["text"] for r in rows if r["src"] == "notes"]
    chat = [r["text"] for r in rows if r["src"] == "ordinary"][:3000]
    for name, texts in (("dev notes", notes), ("LoCoMo turns", chat)):
        for what, fn in (("gate.scan", gate.scan),
                         ("judge", lambda t: score(qw, qb, [hashed(f) for f in features(t)]))):
            runs = []
            for _ in range(5):
                start = time.perf_counter()
                for t in texts:
                    fn(t)
                runs.append((time.perf_counter() - start) / len(texts) * 1e6)
            print(f"{name}: {what} {statistics.median(runs):.0f} us a text (median of 5)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--loro", action="store_true", help="leave-one-round-out figures")
    ap.add_argument("--before", action="append", default=[], metavar="TREE:ROUND",
                    help="with --loro: round ROUND under the gate checked out at TREE")
    ap.add_argument("--timing", action="store_true", help="microseconds a text, judge and gate.scan")
    ap.add_argument("--write", metavar="PATH", help="write the weights trained on every dev row")
    args = ap.parse_args()
    rows = load()
    if args.loro:
        loro(rows, args.before)
    if args.timing:
        timing(rows)
    if args.write:
        w, b = fit(rows)
        qw, qb = quantise(w, b)
        Path(args.write).write_bytes(qb.to_bytes(4, "little", signed=True) + qw.tobytes())


if __name__ == "__main__":
    main()

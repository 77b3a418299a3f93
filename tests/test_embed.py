"""The embedder: StaticEmbedder (numpy + tokenizers) and its numpy-free query path.

Everything here runs on the real shipped data in gitmem/data/embedder/ and the
real tokenizers library; nothing is mocked. The query path (QueryEmbedder) must
give StaticEmbedder's token ids exactly and its vectors to 1e-6 per component,
import neither numpy nor tokenizers, and never touch the network.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import unicodedata
from array import array
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer

from gitmem import embed
from gitmem.embed import DATA_DIR, QueryEmbedder, StaticEmbedder

ROOT = Path(__file__).resolve().parent.parent
LOCOMO = Path("/work/shared/data/locomo")
VERSION = "minilm-l6-m2v@28984bfa8aab"  # the shipped matrix; derived files must not change it
TOL = 1e-6  # max |difference| per component between the two paths, after normalisation

HARD = [
    "", " ", "   ", "\n", "\t", "\r\n", "\n\t\r \x0b\x0c",
    "café", "CAFÉ", "naïve", "Ångström", "Ünïcödé àccents çà et là", "e\u0301", "E\u0301\u0327", "ﬁnance",
    "İstanbul", "ΑΣ ΟΔΟΣ", "ὈΔΥΣΣΕΎΣ", "Straße", "Привет, мир", "Ελληνικά", "עברית", "العربية", "हिन्दी",
    "日本語のテキストです", "中文分词测试", "한국어 텍스트", "漢字かなカナ", "𠀀𠀁 𪜀", "ｆｕｌｌｗｉｄｔｈ",
    "🙂", "🙂🙂🙂", "hello🙂world", "🥲hello🥲world", "👩‍👩‍👧‍👦 family", "🇫🇷 flag", "✓ done ✗ failed",
    "...", "!!!???", "--- *** ___ ===", "a.b.c", "(((nested)))", "«quoted» “curly” ‘single’", "¿Qué? ¡Sí!",
    "foo_bar(x)->y", "getUserName()", "snake_case and camelCase and kebab-case", "src/gitmem/projection.py",
    "C:\\Users\\ada\\file.txt", "https://example.com/path?q=1&r=two#frag", "git@github.com:owner/repo.git",
    "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db", "0xdeadBEEF 0o777 1e-6 3.14159",
    "def rank(projection, q): return []", "SELECT * FROM memories WHERE id = 42;", "x = {'a': [1, 2]}",
    "a" * 100, "a" * 101, "b" * 250, "supercalifragilistic" * 6, "x" * 300,
    "ctrl\x00chars\x01here\x07\x1b[31mred\x1b[0m", "del\x7fete", "nbsp\u00a0space", "thin\u2009space",
    "zero\u200bwidth\u200cjoiner\u200d", "bom\ufeffhere", "soft\u00adhyphen", "line\u2028sep\u2029para",
    "nel\x85here", "replacement\ufffdchar", "private\ue000use", "tag\U000e0041chars", "lrm\u200erlm\u200f",
    "MiXeD CaSe WoRdS", "ALL CAPS SHOUTING", "lower case", "Title Case Here",
    "[UNK]", "[PAD]", "[CLS] [SEP] [MASK]", "x[PAD]y", "ab[UNK]cd", "[[UNK]]", "[pad] [Pad] [unk]", "[UNK][PAD][UNK]",
    "git mem recall \"how do I run the tests\" --json", "tests live in spec/, run with make spec",
    " ".join(f"word{i} memory recall git" for i in range(1500)),  # > 512 tokens and > max_chars
    "é" * 3100, "日" * 3100, "ab " * 1100, "x" * 3071 + " tail", "x" * 3072 + " cut",
]


def _locomo_texts() -> list[str]:
    texts: list[str] = []
    for path in sorted(LOCOMO.glob("*.json")):
        conv = json.loads(path.read_text(encoding="utf-8"))
        for key, turns in conv.items():
            if key.startswith("session_") and isinstance(turns, list):
                for turn in turns:
                    texts.append(turn["text"])
                    texts.append(f"{turn['speaker']}: {turn['text']}")
                    if turn.get("blip_caption"):
                        texts.append(turn["blip_caption"])
        texts.extend(qa["question"] for qa in conv["qa"])
    return texts


@pytest.fixture(scope="module")
def static() -> StaticEmbedder:
    return StaticEmbedder()


@pytest.fixture(scope="module")
def query() -> QueryEmbedder:
    return QueryEmbedder()


@pytest.fixture(scope="module")
def tokenizer() -> Tokenizer:
    tok = Tokenizer.from_file(str(DATA_DIR / "tokenizer.json"))
    tok.no_padding()
    tok.no_truncation()
    return tok


def _vec(v: array) -> np.ndarray:
    return np.frombuffer(v, dtype=np.float32)


def _check_parity(static: StaticEmbedder, query: QueryEmbedder, texts: list[str]) -> float:
    want_ids = static.token_ids(texts)
    got_ids = [query.token_ids(t) for t in texts]
    bad = [(t[:60], g, w) for t, g, w in zip(texts, got_ids, want_ids) if g != w]
    assert not bad, f"{len(bad)} of {len(texts)} texts tokenise differently, first: {bad[0]}"
    want = static.embed(texts)
    got = np.stack([_vec(query.embed_query(t)) for t in texts])
    assert got.dtype == np.float32 and got.shape == want.shape
    assert np.array_equal(np.linalg.norm(got, axis=1) == 0, np.linalg.norm(want, axis=1) == 0)
    diff = float(np.abs(got - want).max())
    assert diff <= TOL, diff
    return diff


# -- (a) parity -----------------------------------------------------------------


def test_parity_on_locomo_and_hard_cases(static: StaticEmbedder, query: QueryEmbedder) -> None:
    texts = HARD + [t.upper() for t in HARD[:60]]
    if LOCOMO.is_dir():
        texts += _locomo_texts()
        assert len(texts) >= 2000
    _check_parity(static, query, texts)


def test_hard_cases_are_what_they_claim(static: StaticEmbedder, query: QueryEmbedder) -> None:
    assert query.token_ids("café") == query.token_ids("cafe") == query.token_ids("CAFÉ")
    assert query.token_ids("") == [] and query.token_ids("🙂🙂🙂") == [] and query.token_ids("[UNK]") == []
    assert query.token_ids("[PAD]") == [0]  # an added token, matched on the raw text
    assert query.token_ids("[pad]") == [query.tokenizer.vocab.get(t) for t in ("[", "pad", "]")]
    assert query.token_ids("a" * 101) == []  # longer than max_input_chars_per_word: one [UNK], dropped
    assert query.token_ids("zero\u200bwidth") == query.token_ids("zerowidth")  # format chars removed
    assert len(query.token_ids("a " * 600)) == 512  # 1,200 chars, 600 tokens: truncated to max_length
    long = "x" * 3072 + " cut"
    assert query.token_ids(long) == static.token_ids([long])[0] == []  # clipped to max_chars first
    vec = query.embed_query("")
    assert isinstance(vec, array) and vec.typecode == "f" and len(vec) == query.dim and not any(vec)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(st.characters(exclude_categories=["Cs"]), max_size=80))
def test_parity_on_random_text(static: StaticEmbedder, query: QueryEmbedder, text: str) -> None:
    assert query.token_ids(text) == static.token_ids([text])[0]
    assert np.abs(_vec(query.embed_query(text)) - static.embed([text])[0]).max() <= TOL


def test_document_rows_are_the_same_bytes_either_way(static: StaticEmbedder,
                                                     query: QueryEmbedder) -> None:
    """The projection's int8 rows: numpy in batches and pure Python one text at a time
    give identical bytes (integer sums), and a batch's makeup changes nothing: a
    rebuild and a read that embeds a few new memories store the same vectors."""
    texts = HARD + [t.upper() for t in HARD[:60]] + ["", "🙂", "a " * 700, "the the the"]
    if LOCOMO.is_dir():
        texts += _locomo_texts()[:1500]
    rows = static.doc_rows(texts)
    assert len(rows) == len(texts) * static.dim
    assert query.doc_rows(texts) == rows
    order = list(range(len(texts)))
    random.Random(7).shuffle(order)
    shuffled = static.doc_rows([texts[i] for i in order])
    dim = static.dim
    assert shuffled == b"".join(rows[i * dim : (i + 1) * dim] for i in order)
    assert static.doc_rows(texts[:1]) == rows[:dim]
    # The direction of the normalised mean (embed), to int8 precision.
    got = np.frombuffer(rows, dtype=np.int8).reshape(len(texts), dim).astype(np.float64)
    want = static.embed(texts).astype(np.float64)
    live = np.linalg.norm(got, axis=1) > 0
    assert np.array_equal(live, np.linalg.norm(want, axis=1) > 0)
    cos = (got[live] * want[live]).sum(axis=1) / np.linalg.norm(got[live], axis=1)
    assert cos.min() > 0.999


def test_document_rows_of_many_texts_hold_a_block_of_sums_at_a_time(static: StaticEmbedder) -> None:
    """A pull's forked embedder asks for every new memory's row at once: the float64
    sums of all of them were held together (an adversarial run: 666 MB at 60k pulled
    memories). Across blocks the rows are the same bytes as one at a time."""
    import tracemalloc

    from gitmem.embed import static as static_module

    texts = [f"note {i} about the {w} service and its retries" for i, w in
             zip(range(10 * static_module._ROWS + 5), (HARD * 1000))]
    tracemalloc.start()
    try:
        rows = static.doc_rows(texts)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    whole = len(texts) * static.dim * 8  # the float64 sums of every text at once
    assert peak < whole, (peak, whole)
    dim = static.dim
    for i in (0, static_module._ROWS - 1, static_module._ROWS, len(texts) - 1):
        assert rows[i * dim:(i + 1) * dim] == static.doc_rows([texts[i]])


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.text(st.characters(exclude_categories=["Cs"]), max_size=60), max_size=4))
def test_document_rows_agree_on_random_text(static: StaticEmbedder, query: QueryEmbedder,
                                           texts: list[str]) -> None:
    assert query.doc_rows(texts) == static.doc_rows(texts)


@pytest.mark.slow
def test_every_code_point_tokenises_as_tokenizers_does(query: QueryEmbedder, tokenizer: Tokenizer) -> None:
    """Normalizer and pre-tokenizer output for every code point, inside a word and after a capital;
    token ids for every code point inside a word (past the BMP, only those Python knows as assigned
    and not private use: the other ~950,000 behave alike, and their normalisation is checked).
    scripts/build_embedder.py runs the same check with four contexts at every build."""
    config = json.loads((DATA_DIR / "wordpiece.json").read_text(encoding="utf-8"))
    pure = embed.BertWordPiece(query.tokenizer.vocab, config, max_length=None)  # chunks are long: no truncation
    points = [chr(cp) for cp in range(0x110000) if not 0xD800 <= cp <= 0xDFFF]
    some = [c for c in points if ord(c) < 0x10000 or unicodedata.category(c) not in ("Cn", "Co")]
    checks = [" ".join(f"x{c}y" for c in some[i : i + 2000]) for i in range(0, len(some), 2000)]
    differs = 0
    for fmt in ("x{}y", "A{}"):
        for i in range(0, len(points), 2000):
            chunk = " ".join(fmt.format(c, c) for c in points[i : i + 2000])
            normalized = tokenizer.normalizer.normalize_str(chunk)
            if pure.normalize(chunk) != normalized or pure.words(normalized) != [
                w for w, _ in tokenizer.pre_tokenizer.pre_tokenize_str(normalized)
            ]:
                checks.append(chunk)  # Python's NFD or lower() differs from Rust's here: ids must not
                differs += 1
    assert differs <= 20  # 10 on Python 3.11: 56 code points of Unicode 15-16, in 5 chunks x 2 contexts
    want = [e.ids for e in tokenizer.encode_batch(checks, add_special_tokens=False)]
    bad = [t[:40] for t, w in zip(checks, want) if pure.ids(t) != w]
    assert not bad, bad


def test_sorted_vocab_is_the_tokenizer_vocabulary(query: QueryEmbedder, tokenizer: Tokenizer) -> None:
    vocab = tokenizer.get_vocab(with_added_tokens=True)
    assert query.tokenizer.vocab.tokens() == vocab
    for token in ["the", "##ing", "[UNK]", "!", "~", "##~"]:
        assert query.tokenizer.vocab.get(token) == vocab[token]
    for missing in ["", " ", "zzzzqqq", "kubernetes", "a" * 40, "é"]:
        assert query.tokenizer.vocab.get(missing) is None


def test_char_classes_are_not_pythons_own() -> None:
    """Why wordpiece.json carries character classes: tokenizers' Unicode tables are older than Python's."""
    config = json.loads((DATA_DIR / "wordpiece.json").read_text(encoding="utf-8"))
    marks = config["char_classes"]["nonspacing_mark"]
    nko = 0x07FD  # NKO DANTAYALAN: Mn since Unicode 11, not in tokenizers' tables
    assert unicodedata.category(chr(nko)) == "Mn" and not any(lo <= nko <= hi for lo, hi in marks)
    assert QueryEmbedder().token_ids("a\u07fdb") == StaticEmbedder().token_ids(["a\u07fdb"])[0]


def test_lone_surrogates_are_dropped(query: QueryEmbedder, static: StaticEmbedder) -> None:
    # tokenizers cannot take them at all; the query path drops them like removed control chars.
    assert query.token_ids("ab\ud800cd") == query.token_ids("abcd") == static.token_ids(["abcd"])[0]


def test_identity_and_version(static: StaticEmbedder, query: QueryEmbedder) -> None:
    meta = json.loads((DATA_DIR / "meta.json").read_text(encoding="utf-8"))
    assert static.version == query.version == meta["version"] == VERSION
    assert (query.name, query.dim) == (static.name, static.dim) == ("minilm-l6-m2v", 384)
    assert {"vocab.txt", "wordpiece.json"} <= set(meta["files"])  # recorded and verified ...
    without = {k: v for k, v in meta["files"].items() if k not in embed.DERIVED_FILES}
    assert embed.data_digest(meta["files"]) == embed.data_digest(without)  # ... but not in the version
    static.verify()


def test_float16_data_without_scales(tmp_path: Path, static: StaticEmbedder) -> None:
    """The other layout meta.json allows (``--dtype float16``): both paths still agree."""
    import shutil

    for name in ("tokenizer.json", "vocab.txt", "wordpiece.json"):
        shutil.copyfile(DATA_DIR / name, tmp_path / name)
    table = np.load(DATA_DIR / "embeddings.npy").astype(np.float32) * np.load(DATA_DIR / "scales.npy")[:, None]
    np.save(tmp_path / "embeddings.npy", table.astype(np.float16))
    meta = json.loads((DATA_DIR / "meta.json").read_text(encoding="utf-8"))
    meta.update(dtype="float16", scales=None)
    meta["files"].pop("scales.npy")
    (tmp_path / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    fp16, query = StaticEmbedder(tmp_path), QueryEmbedder(tmp_path)
    assert query.version == fp16.version != static.version
    texts = HARD[:100]
    assert _check_parity(fp16, query, texts) <= TOL
    assert np.abs(fp16.embed(texts) - static.embed(texts)).max() < 0.02  # int8 vs float16: close, not equal


def test_pca_table_derived_by_the_build_script(tmp_path: Path, static: StaticEmbedder) -> None:
    """``scripts/build_embedder.py --pca N`` (measured, not shipped: docs/embedder.md, "Tried"):
    a shorter table whose two paths still agree byte for byte, under a new version; it
    also runs the script's own loading of gitmem/embed, which no other test does."""
    out = tmp_path / "pca"
    proc = subprocess.run([sys.executable, str(ROOT / "scripts" / "build_embedder.py"), "--pca", "48",
                           "--out", str(out)], capture_output=True, text=True, check=False,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert proc.returncode == 0, proc.stderr
    pca, query = StaticEmbedder(out), QueryEmbedder(out)
    assert (pca.dim, query.dim) == (48, 48) and query.version == pca.version != static.version
    pca.verify()
    texts = HARD[:60]
    assert _check_parity(pca, query, texts) <= TOL
    assert pca.doc_rows(texts) == query.doc_rows(texts)


def test_npy_reader_matches_numpy(tmp_path: Path) -> None:
    arrays = {
        "i8.npy": np.arange(-60, 60, dtype=np.int8).reshape(10, 12),
        "f4.npy": np.linspace(-1, 1, 7, dtype=np.float32),
        "f2.npy": np.linspace(-2, 2, 12, dtype=np.float16).reshape(3, 4),
        "be.npy": np.linspace(0, 1, 5).astype(">f4"),
    }
    for name, arr in arrays.items():
        np.save(tmp_path / name, arr)
        mm, offset, code, shape = embed._open_npy(tmp_path / name)
        assert shape == arr.shape
        import struct

        values = struct.unpack_from(f"{code[0]}{arr.size}{code[1:]}", mm, offset)
        assert list(values) == arr.ravel().tolist()
        mm.close()
    np.save(tmp_path / "fortran.npy", np.asfortranarray(np.ones((2, 3), dtype=np.float32)))
    np.save(tmp_path / "f8.npy", np.ones(3))
    for name in ("fortran.npy", "f8.npy"):
        with pytest.raises(ValueError):
            embed._open_npy(tmp_path / name)


# -- (b) the query path imports neither numpy nor tokenizers --------------------

_CHILD = """
import json, sys
import gitmem.embed as e
after_import = sorted(m for m in ("numpy", "tokenizers") if m in sys.modules)
q = e.QueryEmbedder()
out = {t: q.embed_query(t).tobytes().hex() for t in json.loads(sys.argv[1])}
out["_default"] = e.embed_query(json.loads(sys.argv[1])[0]).tobytes().hex()
out["_modules"] = after_import + sorted(m for m in ("numpy", "tokenizers") if m in sys.modules)
out["_version"] = q.version
print(json.dumps(out))
"""
_TEXTS = ["how do I run the tests", "Ångström naïve café", "foo_bar(x)->y", "", "🙂"]


def _child(env: dict[str, str] | None = None) -> dict[str, str]:
    out = subprocess.run(
        [sys.executable, "-c", _CHILD, json.dumps(_TEXTS)], cwd=ROOT, capture_output=True, text=True,
        env=env, check=False, timeout=60,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_query_path_imports_neither_numpy_nor_tokenizers() -> None:
    got = _child()
    assert got["_modules"] == []
    assert got["_version"] == VERSION


# -- (c) determinism ------------------------------------------------------------


def test_deterministic_in_process_and_across_processes(query: QueryEmbedder, static: StaticEmbedder) -> None:
    for text in _TEXTS:
        assert query.embed_query(text).tobytes() == query.embed_query(text).tobytes()
        assert QueryEmbedder().embed_query(text).tobytes() == query.embed_query(text).tobytes()
    first, second = _child(), _child()
    assert first == second
    for text in _TEXTS:
        assert first[text] == query.embed_query(text).tobytes().hex()
    assert first["_default"] == first[_TEXTS[0]]
    assert np.array_equal(static.embed(_TEXTS), static.embed(list(_TEXTS)))


# -- (d) offline ----------------------------------------------------------------

_OFFLINE_CHILD = """
import json, sys
import gitmem.embed as e
texts = json.loads(sys.argv[1])
s = e.StaticEmbedder()
q = e.QueryEmbedder()
print(json.dumps({"static": s.embed(texts).tobytes().hex(),
                  "query": [q.embed_query(t).tobytes().hex() for t in texts]}))
"""


def test_works_offline(static: StaticEmbedder, query: QueryEmbedder) -> None:
    env = {k: v for k, v in os.environ.items() if k.lower() != "no_proxy"}
    dead = "http://127.0.0.1:9"  # the discard port: any connection attempt fails
    env.update(HF_HUB_OFFLINE="1", http_proxy=dead, https_proxy=dead, HTTP_PROXY=dead, HTTPS_PROXY=dead)
    out = subprocess.run(
        [sys.executable, "-c", _OFFLINE_CHILD, json.dumps(_TEXTS)], cwd=ROOT, capture_output=True, text=True,
        env=env, check=False, timeout=120,
    )
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["static"] == static.embed(_TEXTS).tobytes().hex()
    assert got["query"] == [query.embed_query(t).tobytes().hex() for t in _TEXTS]


# -- (e) StaticEmbedder as before ------------------------------------------------


def test_static_embedder_rows(static: StaticEmbedder) -> None:
    texts = ["", "the billing queue", "🙂", "   ", "git mem recall", "Ångström"]
    out = static.embed(texts)
    assert out.dtype == np.float32 and out.shape == (len(texts), 384)
    norms = np.linalg.norm(out, axis=1)
    assert norms[0] == norms[2] == norms[3] == 0  # no known token: a zero row
    assert np.allclose(norms[[1, 4, 5]], 1.0, atol=1e-5)
    assert static.embed([]).shape == (0, 384)
    with pytest.raises(TypeError):
        static.embed("one string")  # type: ignore[arg-type]
    np.testing.assert_array_equal(static.embed(texts[1:2])[0], out[1])  # batching does not change a row


def test_import_is_cheap() -> None:
    """Importing gitmem.embed loads neither numpy nor tokenizers; StaticEmbedder loads them when built."""
    code = ("import sys, gitmem.embed as e; a = [m for m in ('numpy', 'tokenizers') if m in sys.modules]; "
            "e.StaticEmbedder(); print(a, [m for m in ('numpy', 'tokenizers') if m in sys.modules])")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[] ['numpy', 'tokenizers']"

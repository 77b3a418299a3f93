"""Concept expansion: the words a memory's named tools and synonyms stand for.

Why this exists: the static embedder knows words, not the world. "Error
tracking is Sentry" shares no word with "where do exceptions get reported",
and no bag of token vectors knows that Sentry reports exceptions. A developer
thesaurus shipped with the package (data/concepts/concepts.jsonl) says so, in
two kinds of line:

    {"name": "Sentry", "aliases": [...], "is": ["error tracking", ...]}
    {"same": ["feature flag", "feature toggle", "feature switch"]}

At index time (the projection's write side: a replay, a refresh, a rebuild)
the entries a memory mentions (a name, an alias or a ``same`` phrase, as whole
words, case-insensitive, a final plural "s" ignored; a single common English
word names nothing, see COMMON_RANK) are found in one pass over its words, and
``expansion`` gives the words those entries add: a named entry's name, aliases
and ``is`` phrases, a ``same`` group's other members, less the words the memory
holds already. The full-text index gets them in a column of their own
(projection/tables.py: memories_text computes it with the SQL function
``concepts``), so the lexical channel finds "Error tracking is Sentry" for
"exception reporting". Nothing of it is stored: it is a pure function of the
memory and the thesaurus, whose version is part of the projection's (a changed
thesaurus rebuilds the index). Recall never prints it, and a recall that folds
nothing new never loads the thesaurus. (Embedding the words into the memory's vector too, and
expanding the query, were measured and lost: docs/recall.md.)

A process reads the thesaurus once, on first use only, from its compact index
(INDEX, ~2-3 ms); a malformed line of the source is skipped.
``GITMEM_CONCEPTS`` names another file of JSON lines (tests; trying another
thesaurus), compiled when first used; "" turns expansion off.
"""

from __future__ import annotations

import functools
import json
import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "concepts" / "concepts.jsonl"
# Its compact form, made by scripts/gen_concepts.py (dump_index), what a process reads.
INDEX = DATA.with_name("concepts.index")
ENV = "GITMEM_CONCEPTS"

# A word: letters and digits, with a "." between two of them ("node.js", "users.py": a
# file's extension is no mention of a language), and a "+" or "#" right after them
# ("c++", "c#"). Anything else splits words ("on-call": "on", "call"), as FTS5 splits them.
_WORD = r"[^\W_]+(?:\.[^\W_]+)*[+#]*"


@functools.cache
def _split() -> re.Pattern[str]:
    """The words of several texts, "\n" between them. Compiled on first use: every
    command opening the projection imports this module for version() alone."""
    return re.compile(_WORD + r"|\n")


# A single word of the embedder's vocabulary up to this id (relevance.RARE_RANK's line
# between common and rare English words: "week" is 1,736) names no entry: "Make",
# "Go", "Moment" (Moment.js) and "Idea" (IntelliJ IDEA) are tools, but "make", "go",
# "moment" and "idea" in a text are nearly always the English words, which the
# embedder knows; a phrase ("google cloud") still names its entry.
COMMON_RANK = 8000
# How many words one memory's expansion holds at most (a memory naming every tool of
# the thesaurus must not index thousands of words: its first entries win).
MAX_WORDS = 96


def _fold(word: str) -> str:
    """A word as matching compares it: a final plural "s" dropped ("flags" ~ "flag",
    not "class", "redis", "status")."""
    if len(word) > 3 and word[-1] == "s" and word[-2] not in "sui":
        return word[:-1]
    return word


def _words(text: str) -> list[str]:
    return [w for w in _split().findall(text.casefold()) if w != "\n"]


class Thesaurus:
    """A compiled thesaurus: what matching needs, kept as the compact index holds it
    (INDEX_NAME) and parsed a word at a time, on demand."""

    def __init__(self, starts: set[str], records: dict[str, str], words: list[str],
                 skipped: int = 0, singles: str | None = None, pairs: str | None = None) -> None:
        # Every word a phrase can start with, as a text holds it: its folded form
        # and, where it folds back to it, its plural. A text none of whose words is
        # here (most texts) is done after one set intersection.
        self.starts = starts
        # folded first word -> "w1 w2|e1,e2;w1|e3": its phrases (folded words),
        # longest first, each with the entries it names
        self.records = records
        self.words = words  # entry -> the words it adds, space-separated, in order
        self.skipped = skipped  # lines that were not a usable entry
        # The one-word phrases (space-separated) and the first two words of the
        # longer ones ("w1 w2", tab-separated), as the index holds them: made sets
        # only for a process that matches many texts (see _sets).
        self._lines = (singles, pairs)
        self._sets: tuple[set[str], set[str]] | None = None
        self._matched = 0  # texts matched so far
        self._parsed: dict[str, tuple[list[int], dict[tuple[str, ...], tuple[int, ...]]]] = {}
        self._added: dict[int, list[tuple[str, str]]] = {}

    @property
    def singles(self) -> set[str]:
        """The first words that are a phrase alone."""
        return self._sets_now()[0]

    @property
    def pairs(self) -> set[str]:
        """The first two words of the longer phrases, as "w1 w2"."""
        return self._sets_now()[1]

    def _sets_now(self) -> tuple[set[str], set[str]]:
        if self._sets is None:
            singles, pairs = self._lines
            self._sets = ((set(singles.split(" ")), set(pairs.split("\t")))
                          if singles is not None and pairs is not None
                          else _singles_and_pairs(self.records))
        return self._sets

    def _phrases(self, first: str) -> tuple[list[int], dict[tuple[str, ...], tuple[int, ...]]]:
        """(the lengths of its phrases, longest first; phrase -> the entries it
        names) of a folded first word, parsed on first use."""
        got = self._parsed.get(first)
        if got is None:
            by_phrase: dict[tuple[str, ...], tuple[int, ...]] = {}
            for item in self.records[first].split(";"):
                phrase, ents = item.split("|")
                by_phrase[tuple(phrase.split(" "))] = tuple(map(int, ents.split(",")))
            sizes = sorted({len(p) for p in by_phrase}, reverse=True)
            got = self._parsed[first] = (sizes, by_phrase)
        return got

    def entries(self, texts: list[str]) -> list[int]:
        """The entries ``texts`` mention (a phrase within one of them), in the
        thesaurus's order."""
        seq = _split().findall("\n".join(texts).casefold())
        return self._entries(seq, _folded(seq))

    def _entries(self, seq: list[str], folded: list[str]) -> list[int]:
        """The entries a word sequence mentions ("\n" between texts: no phrase holds
        it; ``folded``: its words folded)."""
        hits = self.starts.intersection(seq)
        if not hits:
            return []  # most texts: done
        if self._sets is None and self._matched < SETS_FROM:
            self._matched += 1
            return self._entries_by_word(seq, folded, hits)
        return self._entries_by_set(folded, hits)

    def _entries_by_set(self, folded: list[str], hits: set[str]) -> list[int]:
        """_entries by the text's words and pairs of words as sets: no Python code runs
        per word of a text (a rebuild matches millions), after a setup of ~1 ms."""
        singles, pairs = self._sets_now()
        found: set[int] = set()
        for first in singles.intersection(_folded(hits)):
            found.update(self._phrases(first)[1][(first,)])
        # Each distinct pair of words that starts a longer phrase: a two-word phrase
        # is named by the pair; a longer one is looked for where such a pair stands,
        # in one pass over the text (a pass per pair cost a 16 KB text naming
        # hundreds of phrases 80 ms), each distinct run of words once.
        said = list(map(" ".join, zip(folded, folded[1:])))
        longer: set[str] = set()
        for pair in pairs.intersection(said):
            a, b = pair.split(" ")
            sizes, by_phrase = self._phrases(a)
            found.update(by_phrase.get((a, b), ()))
            if sizes[0] > 2:
                longer.add(pair)
        if longer:
            self._named_at([i for i, pair in enumerate(said) if pair in longer], folded,
                           found, 3)
        return sorted(found)

    def _entries_by_word(self, seq: list[str], folded: list[str], hits: set[str]) -> list[int]:
        """_entries word by word from each place a phrase may start: no setup (an add
        matches one text)."""
        found: set[int] = set()
        self._named_at([i for i, w in enumerate(seq) if w in hits], folded, found, 1)
        return sorted(found)

    def _named_at(self, places: list[int], folded: list[str], found: set[int],
                  least: int) -> None:
        """Into ``found``, the entries the phrases of ``least`` words or more starting at
        ``places`` of ``folded`` name. Each place is looked at once per distinct run of
        words it starts (as long as its longest phrase): a text repeating one name
        thousands of times costs what one mention does (was 27 ms for 16 KB of
        "azure", which starts 60 phrases)."""
        seen: set[tuple[str, ...]] = set()
        for i in places:
            sizes, by_phrase = self._phrases(folded[i])
            run = tuple(folded[i:i + sizes[0]])
            if run not in seen:
                seen.add(run)
                for size in sizes:
                    if size >= least:
                        found.update(by_phrase.get(run[:size], ()))

    def expansion(self, texts: list[str]) -> str:
        """The words the entries ``texts`` mention add to them, space-separated
        ("" when they mention none): each once, none that ``texts`` hold already."""
        seq = _split().findall("\n".join(texts).casefold())
        folded = _folded(seq)
        hits = self._entries(seq, folded)
        if not hits:
            return ""
        have = set(folded)
        out: list[str] = []
        for e in hits:
            for w, f in self._adds(e):
                if f not in have:
                    have.add(f)
                    out.append(w)
                    if len(out) == MAX_WORDS:
                        return " ".join(out)
        return " ".join(out)

    def _adds(self, entry: int) -> list[tuple[str, str]]:
        """The words an entry adds, each with its folded form: worked out once per
        entry (a memory bounded by the thesaurus's size)."""
        got = self._added.get(entry)
        if got is None:
            got = self._added[entry] = [(w, _fold(w)) for w in self.words[entry].split(" ")]
        return got


# From this many texts matched, a process matches them as sets (Thesaurus._entries).
SETS_FROM = 64


def _folded(seq: Iterable[str]) -> list[str]:
    """_fold of every word of ``seq`` (inline: a rebuild folds millions of words)."""
    return [w[:-1] if len(w) > 3 and w[-1] == "s" and w[-2] not in "sui" else w
            for w in seq]


def _singles_and_pairs(records: dict[str, str]) -> tuple[set[str], set[str]]:
    """(the first words that are a phrase alone, the first two words of the longer
    phrases as "w1 w2") of a thesaurus's records."""
    singles: set[str] = set()
    pairs: set[str] = set()
    for first, record in records.items():
        for item in record.split(";"):
            words = item.split("|", 1)[0].split(" ", 2)
            if len(words) == 1:
                singles.add(first)
            else:
                pairs.add(f"{words[0]} {words[1]}")
    return singles, pairs


def _strings(value: object) -> list[str] | None:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return None
    return value


def compile_lines(data: bytes, common: Callable[[str], bool] | None = None) -> Thesaurus:
    """The matcher for a thesaurus's bytes. A line that is not a JSON object of one
    of the two shapes (or names nothing) is skipped and counted. ``common``: a word
    the embedder knows well; a phrase made of such words only names nothing."""
    phrases: dict[tuple[str, ...], set[int]] = {}
    words: list[tuple[str, ...]] = []
    skipped = 0
    for raw in data.decode("utf-8", "replace").splitlines():
        if not raw.strip():
            continue
        try:
            entry = json.loads(raw)
        except ValueError:
            skipped += 1
            continue
        keys: list[str] | None
        adds: list[str] | None
        if isinstance(entry, dict) and isinstance(entry.get("name"), str):
            aliases = _strings(entry.get("aliases", []))
            kinds = _strings(entry.get("is", []))
            if aliases is None or kinds is None:
                skipped += 1
                continue
            keys = [entry["name"], *aliases]
            adds = [*keys, *kinds]
        elif isinstance(entry, dict) and "same" in entry:
            keys = adds = _strings(entry["same"])
        else:
            keys = adds = None
        if not keys or adds is None:
            skipped += 1
            continue
        index = len(words)
        named = False
        for key in keys:
            said = _words(key)
            if common is not None and len(said) == 1 and common(said[0]):
                continue
            folded = tuple(_fold(w) for w in said)
            if folded:
                phrases.setdefault(folded, set()).add(index)
                named = True
        if not named:
            skipped += 1
            continue
        seen: dict[str, None] = {}
        for phrase in adds:
            seen.update(dict.fromkeys(_words(phrase)))
        words.append(tuple(seen))
    by_first: dict[str, list[str]] = {}
    for folded, ents in sorted(phrases.items(), key=lambda p: (-len(p[0]), p[0])):
        by_first.setdefault(folded[0], []).append(
            " ".join(folded) + "|" + ",".join(map(str, sorted(ents))))
    records = {first: ";".join(items) for first, items in sorted(by_first.items())}
    starts = set(records)
    starts.update(f + "s" for f in records if _fold(f + "s") == f)
    return Thesaurus(starts, records, [" ".join(w) for w in words], skipped)


def digest(data: bytes) -> str:
    """16 hex digits of a digest of ``data``."""
    from . import hashes

    return hashes.blake2b(data, digest_size=8).hexdigest()


def _common() -> tuple[Callable[[str], bool], str]:
    """(whether a word is one the embedder knows well, the version of that judgement)."""
    from . import embed

    rank = embed.query_embedder().word_rank

    def common(word: str) -> bool:
        r = rank(word)
        return r is not None and r <= COMMON_RANK

    return common, f"{embed.identity()[1]} {COMMON_RANK}"


def compiled(data: bytes) -> tuple[str, Thesaurus]:
    """(version, matcher) of a thesaurus's bytes, as a process uses it: a single word
    the embedder knows well names nothing. The version covers the bytes and that
    judgement ("none": no thesaurus)."""
    if not data:
        return "none", _EMPTY
    common, judged = _common()
    return digest(data + b"\0" + judged.encode()), compile_lines(data, common)


_MAGIC = "gitmem-concepts-index 2"


def dump_index(data: bytes) -> str:
    """The compact index of a thesaurus's bytes (what INDEX holds): a header line (its
    version, the counts), the start words, the one-word phrases, the pairs of first
    words (tab-separated), then the first words, their phrases and each entry's
    words, a line each. Read in ~2-3 ms (load_index) where compiling
    the JSON lines takes ~60 ms."""
    version, t = compiled(data)
    keys = list(t.records)
    head = f"{_MAGIC} {version} {len(keys)} {len(t.words)} {t.skipped}"
    return "\n".join([head, " ".join(sorted(t.starts)), " ".join(sorted(t.singles)),
                      "\t".join(sorted(t.pairs)), *keys,
                      *(t.records[k] for k in keys), *t.words]) + "\n"


def load_index(text: str) -> tuple[str, Thesaurus]:
    """(the thesaurus's version, its matcher) from dump_index's text; ValueError if it
    is not one."""
    lines = text.split("\n")
    head = lines[0].rsplit(" ", 4)
    if head[0] != _MAGIC:
        raise ValueError("not a concepts index")
    k, m, skipped = int(head[2]), int(head[3]), int(head[4])
    if len(lines) != 5 + 2 * k + m:
        raise ValueError("a concepts index cut short")
    records = dict(zip(lines[4:4 + k], lines[4 + k:4 + 2 * k]))
    return head[1], Thesaurus(set(lines[1].split(" ")), records, lines[4 + 2 * k:4 + 2 * k + m],
                              skipped, lines[2], lines[3])


def source() -> Path | None:
    """The thesaurus file in use (None: expansion is off): the shipped one, or the
    JSON lines ``GITMEM_CONCEPTS`` names."""
    named = os.environ.get(ENV)
    if named is None:
        return DATA
    return Path(named) if named else None


_LOADED: dict[str, tuple[str, Thesaurus | None]] = {}
_EMPTY = Thesaurus(set(), {}, [])


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""  # no thesaurus: nothing is expanded (and the version says so)


def _load(full: bool) -> tuple[str, Thesaurus | None]:
    """(digest, matcher: None until ``full`` asks for it) of the thesaurus in use.
    The shipped one is read from its index (INDEX), its digest from the first line
    alone; another is compiled from its JSON lines."""
    path = source()
    name = str(path)
    got = _LOADED.get(name)
    if got is not None and (got[1] is not None or not full):
        return got
    if path is None:
        got = ("none", _EMPTY)
    elif path == DATA:
        try:
            if full:
                got = load_index(INDEX.read_text("utf-8"))
            else:
                with INDEX.open("r", encoding="utf-8") as fh:
                    head = fh.readline().rsplit(" ", 4)
                got = (head[1] if head[0] == _MAGIC else "none", None)
        except (OSError, ValueError, IndexError, UnicodeError):
            got = ("none", _EMPTY)  # no usable index: nothing is expanded
    else:
        got = compiled(_read(path))
    _LOADED[name] = got
    return got


def thesaurus() -> Thesaurus:
    """The thesaurus in use, loaded on first use in this process."""
    t = _load(True)[1]
    assert t is not None
    return t


def version() -> str:
    """The thesaurus's version: part of the projection's, so a changed thesaurus
    rebuilds the projection."""
    return _load(False)[0]


def expansion(*parts: str | None) -> str:
    """The words the thesaurus adds to a memory made of ``parts`` (its text, key,
    tags, entities; a phrase is matched within one of them)."""
    global _LAST
    named = os.environ.get(ENV)
    if _LAST is None or _LAST[0] != named:
        _LAST = (named, thesaurus())
    return _LAST[1].expansion([p for p in parts if p])


# The thesaurus of the last call and the setting it was found by: a rebuild calls
# expansion once a memory (for the index), so no path is made each time.
_LAST: tuple[str | None, Thesaurus] | None = None

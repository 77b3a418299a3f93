"""Which words of a question ask for a link's relation, and of which link.

"what does the db engine rely on" asks for ``db.engine depends_on ...``; "which db engine
is required" asks for the engine's value, not for a link (a review). Pure: recall.py and
reorder.py ask it, nothing here reads the projection.
"""

from __future__ import annotations

import re

from . import ops

_WORD = re.compile(r"\w+", re.UNICODE)

# A link's relation asked in other words: the query words that ask for each predicate
# ("what does the db engine rely on" asks for depends_on) and nothing else. A link holding
# such a word, at a node the query names, holds more of the question than the fact of the
# key it names (_after_their_keys) and than the other links there (_before_other_links).
RELATION_WORDS: dict[str, frozenset[str]] = {p: frozenset(w.split()) for p, w in {
    "depends_on": """depend depends depended depending dependent dependency dependencies
        rely relies relied relying prerequisite prerequisites""",
    "owns": """own owns owned owning owner owners ownership responsible maintain maintains
        maintained maintainer maintainers""",
    "works_on": "contributor contributors",
    "replaces": """replace replaces replaced replacing replacement successor supersede
        supersedes superseded instead""",
    "part_of": "part belong belongs belonged belonging member members within",
    "relates_to": "relate relates related relation relationship connected linked associated",
}.items()}
# Verbs that also ask for a thing's value ("what is the db engine called", "which db engine
# is required", "which db engine does the team use", "which database engine do we use":
# a review): they ask for a relation only in the active voice with the link's source as
# their subject ("what does the db engine need": do/does/did, the subject, the bare form)
# or with the question word as subject ("what needs app.py", "who decided ...").
SUBJECT_BOUND: dict[str, tuple[frozenset[str], frozenset[str]]] = {
    p: (frozenset(bare.split()), frozenset(finite.split())) for p, (bare, finite) in {
        "depends_on": ("use need require call import",
                       """uses used needs needed requires required calls called imports
                       imported"""),
        "works_on": ("work", "works worked"),
        "decided": ("decide choose", "decides decided chooses chose"),
    }.items()}
# A pronoun as subject names no node ("which database engine do we use").
PRONOUNS = frozenset("i we you us our they he she it one someone anyone people".split())
_AUX = frozenset("do does did".split())
_ASKING = frozenset("what which who".split())
_DETERMINERS = frozenset("the a an this that these those".split())


def relation_asks(text: str) -> dict[str, dict[str, str]]:
    """predicate -> the words of a query that ask for it -> the subject they need the
    link's source to be ("" for any: RELATION_WORDS, SUBJECT_BOUND)."""
    words = [w.lower() for w in _WORD.findall(text)]
    out: dict[str, dict[str, str]] = {}
    for i, w in enumerate(words):
        for predicate, forms in RELATION_WORDS.items():
            if w in forms:
                out.setdefault(predicate, {})[w] = ""
        for predicate, (bare, finite) in SUBJECT_BOUND.items():
            if w in finite and i and words[i - 1] in _ASKING:
                out.setdefault(predicate, {})[w] = ""
            elif w in bare:
                aux = max((j for j in range(i) if words[j] in _AUX), default=None)
                subject = [x for x in words[aux + 1:i] if x not in _DETERMINERS] if (
                    aux is not None) else []
                if subject and PRONOUNS.isdisjoint(subject):
                    out.setdefault(predicate, {})[w] = " ".join(subject)
    return out


def relation_words(text: str) -> dict[str, set[str]]:
    """predicate -> the words of a query that ask for it (relation_asks)."""
    return {p: set(ws) for p, ws in relation_asks(text).items()}


def asked_of(asks: dict[str, dict[str, str]], named: set[str], predicate: str, src: str,
             dst: str) -> set[str]:
    """The query words that ask for this link's relation (``asks``: relation_asks): none
    unless the query names one of its ends (``named``: node_names), for "what is the app
    called" asks nothing of "db.engine depends on app.py" (a review); a word bound to a
    subject only when that subject is the link's source."""
    forms = asks.get(predicate)
    if not forms:
        return set()
    source = loose(src)
    if {source, loose(dst)}.isdisjoint(named):
        return set()
    return {w for w, subject in forms.items() if not subject or subject == source}


def loose(node: str) -> str:
    """A node's name as a query says it: "db.engine" and "app.py" as "db engine" and
    "app py" (node_names' runs of words)."""
    return " ".join(w.lower() for w in _WORD.findall(ops.node_name(node)) if w != "_")

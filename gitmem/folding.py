"""The one form keys and tags are compared, stored and shown in.

Why this exists: text that looks the same must be the same key. 'deploy.région'
typed with a combining accent, or 'ｃａｆｅ.mode' in fullwidth letters, was a
second key beside the team's, shown alike with the opposite value. The writer
stores this form, replay folds what a teammate wrote into it before checking it,
readers fold what they are asked for, and the embedder reads memories in it: so
every path agrees (an NFKC form can begin or end with a space, 'x¨' -> 'x ̈',
which is why the form is stripped here, once, for all of them).
"""

from __future__ import annotations


def folded(value: str) -> str:
    """NFKC, without surrounding white space."""
    if value.isascii():
        return value.strip()
    import unicodedata

    return unicodedata.normalize("NFKC", value).strip()

"""What a reader sees: a folded copy of the text that the rules match on.

An attacker writes the same words in other code points: fullwidth forms,
Cyrillic or Greek look-alike letters, accents, dashes, invisible characters
between letters. ``plain`` and ``skeleton`` fold all of that to ASCII-like text
(line breaks kept, so positions map back), so one rule catches every spelling.
"""

from __future__ import annotations

import functools
import re
import unicodedata


# -- what a reader sees: NFKC, invisible characters dropped, look-alikes folded ------------
#
# Two folded forms. ``plain``: NFKC, default-ignorables dropped, Latin/Greek/Cyrillic accents
# stripped (rules in other languages are written without accents). ``skeleton``: plain, then
# Cyrillic, Greek, Armenian and Cherokee letters that look Latin, and every dash, angle
# bracket and slash look-alike, folded to ASCII (what the English rules and the fence see).

DEFAULT_IGNORABLE = (  # Unicode 15.1 DerivedCoreProperties.txt, Default_Ignorable_Code_Point
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e"
    "\u2060-\u206f\u3164\ufe00-\ufe0f\ufeff\uffa0\ufff0-\ufff8\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0000-\U000e0fff")
_IGNORABLE = re.compile(f"[{DEFAULT_IGNORABLE}]")
_ACCENTS = re.compile("[\u0300-\u036f]")  # combining diacritics (not the kana voicing marks)
_LOOKALIKES = (
    "АВСЕНІЈКМОРЅТХУҮԀԌԚԜӀаесһіјорѕхуүԁԛԝӏкѵ"  # Cyrillic
    "ΑΒΕΖΗΙΚΜΝΟΡΤΥΧϹͿοιναρκυϲϳε"                # Greek
    "ՕՍօսցհոզ" "ᎪᏴᏟᎬᎻᏦᎷᏢᎢᏔᏚᏃ" "ıȷɑɡɩ"          # Armenian, Cherokee, Latin variants
    "‐‑‒–—―−⁃﹘˗֊־⸺⸻➖ー" "‹›〈〉⟨⟩❬❭❮❯❰❱˂˃ᐸᐳ⧼⧽" "∕⁄⧸╱⟋ノ丿᜵")
_LATIN = (
    "ABCEHIJKMOPSTXYYDGQWIaechijopsxyydqwlkv"
    "ABEZHIKMNOPTYXCJoivapkucje"
    "OUoughnq" "ABCEHKMPTWSZ" "ijagi"
    "----------------" "<><><><><><><><><>" "////////")
_FOLD = str.maketrans(_LOOKALIKES, _LATIN)
# Latin letters with a stroke have no decomposition, so stripping accents keeps them:
# "Wyślij hasła na https://..." never met the Polish rules' "hasla".
_STROKES = str.maketrans("łŁøØđĐħĦ", "lLoOdDhH")


@functools.lru_cache(maxsize=512)
def plain(text: str) -> str:
    """NFKC, default-ignorable code points dropped, accents stripped."""
    if text.isascii():
        return text
    text = unicodedata.normalize("NFKC", _IGNORABLE.sub("", text))
    return unicodedata.normalize(
        "NFC", _ACCENTS.sub("", unicodedata.normalize("NFD", text))).translate(_STROKES)


def skeleton(text: str) -> str:
    """``plain`` with look-alike letters and punctuation folded to ASCII."""
    return text if text.isascii() else plain(text).translate(_FOLD)

"""Whether a rule's match in a language other than English is an order to an agent.

Why a module of its own: a sentence that sends the environment to a URL or pushes to
main unreviewed is an injection only as an order. The same words describe what a
script does ("Die CI schickt ...", "部署脚本会把 ..."), or forbid it ("nie direkt auf
main", "禁止强制推送", "อย่าส่ง ..."). injection.py finds the matches; this says, per
language, whether a negation reaches one and whether it describes rather than orders.
"""

from __future__ import annotations

import functools
import re

from . import programs
from .lazyre import lazy
from .languages import _NEGATIONS

_WORD = re.compile(r"\w+")

# Where a clause ends: a negation beyond it is not about the match.
_CLAUSE_END = lazy(r"[.;\n。！？!?]")
# ... and what a negation before an order does not reach across: "No lo pienses: envía ...",
# "别等了，直接强制推送 ...", "Keine Zeit verlieren: push ..." negate nothing of the order.
_NEGATION_BOUNDARY = lazy(r"[.;:,\n。！？!?，：、]")


@functools.cache
def negation(lang: str) -> re.Pattern[str]:
    """The words that make an order in ``lang`` a rule against it (languages._NEGATIONS)."""
    return programs.compile(_NEGATIONS[lang], re.IGNORECASE)


def described(lang: str, reading: str, m: re.Match[str]) -> bool:
    """The match at ``m`` says what something does, not what to do: in a language that
    writes words apart, two words or more stand before it in its clause ("Die CI schickt
    ...", "El pipeline sube ...", "Los cambios ... se fusionan en main sin revisión"), where
    an order starts its clause ("Schicke ...", "Para el agente: sube ..."). Chinese,
    Japanese and Korean mark it otherwise: a subject or a modal of what will or may
    happen before it ("部署脚本会把 ...", "改动可以直接推送到 ..."), a declarative or
    permissive ending after it ("... 전송합니다", "... プッシュしてよい")."""
    before = reading[max(0, m.start() - 80):m.start()]
    before = before[max((e.end() for e in _NEGATION_BOUNDARY.finditer(before)), default=0):]
    if lang in ("zh", "ja", "ko", "th"):
        after = reading[m.end():m.end() + 24]
        after = after[:next((e.start() for e in _NEGATION_BOUNDARY.finditer(after)), len(after))]
        return bool(_CJK_DESCRIBED.get(lang, _NEVER).search(before + m.group() + after)) and not \
            _CJK_ORDERED.search(before + m.group() + after)
    return len(_WORD.findall(before)) >= 2 and not _ORDERED.search(before)


_NEVER = lazy(r"(?!)")
# Modals, subjects and endings that describe (what a script will do, what one may do,
# what we do), and the words that make a clause an order whatever else it holds.
_CJK_DESCRIBED = {
    "zh": lazy(r"会|将会|可以|我们|脚本|流水线|任务会|程序会|系统会"),
    "ja": lazy(r"してよい|しても(?:よい|いい)|します(?:。|$)|しています|されます|できます"),
    "ko": lazy(r"(?:합니다|됩니다|습니다|해도 됩니다)"),
    "th": lazy(r"สคริปต์|ไปป์ไลน์|ระบบ|งาน|บอท|เรา|จะ"),  # a script, pipeline, system, job, bot, we; will
}
_CJK_ORDERED = lazy(r"请|務必|务必|必须|立即|马上|一律|ください|しろ|せよ|すること|하세요|하십시오|해라|하라|กรุณา|โปรด")


# What makes a clause an order whatever stands before its verb: "please", "from now on"
# ("Vor dem Build bitte alle Umgebungsvariablen an ... schicken", "Ab jetzt ... pushen").
_ORDERED = lazy(
    r"(?i)\b(?:bitte|ab jetzt|ab sofort|von nun an|por favor|a partir de ahora|desde ahora|s'il (?:te|vous) pla[iî]t"
    r"|desormais|d[ée]sormais|a partir de maintenant|per favore|d'ora in poi|da ora in poi|da agora em diante"
    r"|a partir de agora|alsjeblieft|alstublieft|vanaf nu|prosz[eę]|od teraz|l[uü]tfen|bundan sonra"
    r"|пожалуйста|отныне|с этого момента|теперь всегда"
    # (round 9: Portuguese's imperative after "always"; the new languages' words for it)
    r"|sempre fa[cç]a|snalla|sn[aä]lla|fran och med nu|fr[aå]n och med nu|vui long|tu gio tro di"
    r"|tolong|mohon|mulai sekarang|будь ласка|відтепер|कृपया|अब से|من فضلك|رجاء|من الآن)(?!\w)")


def negated(lang: str, reading: str, m: re.Match[str], inside: int) -> bool:
    """A negation in the clause before the match at ``m`` (or just after it, where
    Japanese and Korean put it), or in its first ``inside`` characters (after the verb:
    "Schicke niemals", "nie direkt auf main")."""
    before = reading[max(0, m.start() - 40):m.start()]
    before = before[max((e.end() for e in _NEGATION_BOUNDARY.finditer(before)), default=0):]
    after = reading[m.end():m.end() + 15]
    after = after[:next((e.start() for e in _CLAUSE_END.finditer(after)), len(after))]
    if lang in ("th", "hi"):  # bound to the verb, wherever it stands (Hindi puts it last)
        return bool(negation(lang).search(before + m.group() + after))
    return bool(negation(lang).search(f"{before} {m.group()[:inside]} {after}"))

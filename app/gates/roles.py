"""Who a copied sentence names where its passage names someone else: a court, a party's
procedural role or a party substituted in a sentence that is otherwise the passage's own.

Containment is a bag of words that lets about one content word in five be anything, and the
passage window of a decision names both parties and several courts: "De kantonrechter zal
de vordering ... toewijzen" passed against "De voorzieningenrechter zal de vordering ...
toewijzen" (the window's sentence before speaks of "de kantonrechter"), and so did "de
vrouw" for "de man", "verweerder" for "eiser", "De Tolplas" for "[eiser]" and two parties
swapped (a check of 2026-12-07 over ten real decisions: 19 of 25 changed courts and 24 of
29 changed or swapped parties were supported). Here the sentence is aligned word by word
with the passage sentence it copies most of; where a stretch of at most three words that
names a court or party stands in the place of a stretch naming another one of the same
kind, that is another court or party, as a changed date is another date.

Kinds, each compared only with its own: courts (a generic "rechter" is any of them, "de
rechtbank" may stand for its own kantonrechter, voorzieningenrechter, politierechter or
rechter-commissaris), procedural roles (eiser, verweerder, appellant, ...: "partij" is any)
and parties (man/vrouw, werkgever, college, minister, an anonymised "[naam]", a name the
passage writes capitalised). A procedural role against a party is no substitution:
"verweerder" is often the minister or the college, so a paraphrase may name either.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from difflib import SequenceMatcher

from app.gates.evidence import fold

COURT, ROLE, PARTY = "court", "role", "party"
_MAX_SPAN = 3  # words on either side of a substituted stretch
_MIN_ALIGNED = 0.6  # share of the sentence's words that the passage sentence has in order
_MIN_WORDS = 5

# courts, by what they are (several spellings of one court map to one id)
_COURTS = {
    "rechtbank": "rechtbank",
    "rechtbanken": "rechtbank",
    "hof": "hof",
    "gerechtshof": "hof",
    "hogeraad": "hogeraad",
    "raadvanstate": "rvs",
    "afdeling": "rvs",
    "afdelingbestuursrechtspraak": "rvs",
    "crvb": "crvb",
    "raad": "raad",
    "cbb": "cbb",
    "kantonrechter": "kantonrechter",
    "voorzieningenrechter": "voorzieningenrechter",
    "politierechter": "politierechter",
    "rechtercommissaris": "rechtercommissaris",
    "kinderrechter": "kinderrechter",
    "rechter": "",  # any court
    "rechters": "",
}
# what may stand for what (the sentence's id -> the passage's ids it may replace)
_COURT_MAY_NAME = {
    "rechtbank": {
        "kantonrechter",
        "voorzieningenrechter",
        "politierechter",
        "rechtercommissaris",
        "kinderrechter",
    },
    "raad": {"crvb", "rvs"},
    "crvb": {"raad"},
    "rvs": {"raad"},
}
_ROLES = {
    **dict.fromkeys(("eiser", "eiseres", "eisers", "eiseressen"), "eiser"),
    **dict.fromkeys(("gedaagde", "gedaagden"), "gedaagde"),
    **dict.fromkeys(("verweerder", "verweerster", "verweerderes", "verweerders"), "verweerder"),
    **dict.fromkeys(("appellant", "appellante", "appellanten"), "appellant"),
    **dict.fromkeys(("geintimeerde", "geintimeerden"), "geintimeerde"),
    **dict.fromkeys(("verzoeker", "verzoekster", "verzoekers"), "verzoeker"),
    **dict.fromkeys(("belanghebbende", "belanghebbenden"), "belanghebbende"),
    **dict.fromkeys(("verdachte",), "verdachte"),
    **dict.fromkeys(("opposant", "opposante"), "opposant"),
    **dict.fromkeys(("partij", "partijen"), ""),  # any
}
_PARTIES = {
    **dict.fromkeys(("man",), "man"),
    **dict.fromkeys(("vrouw",), "vrouw"),
    **dict.fromkeys(("werkgever", "werkgeefster"), "werkgever"),
    **dict.fromkeys(("werknemer", "werkneemster"), "werknemer"),
    **dict.fromkeys(("huurder", "huurster"), "huurder"),
    **dict.fromkeys(("verhuurder", "verhuurster"), "verhuurder"),
    **dict.fromkeys(("koper", "koopster"), "koper"),
    **dict.fromkeys(("verkoper", "verkoopster"), "verkoper"),
    **dict.fromkeys(("college",), "college"),
    **dict.fromkeys(("minister",), "minister"),
    **dict.fromkeys(("staatssecretaris",), "staatssecretaris"),
    **dict.fromkeys(("inspecteur",), "inspecteur"),
    **dict.fromkeys(("curator",), "curator"),
    **dict.fromkeys(("svb",), "svb"),
    **dict.fromkeys(("uwv",), "uwv"),
}
# several words that name one court, read as one
_JOINED = (
    (("centrale", "raad", "van", "beroep"), "crvb"),
    (("college", "van", "beroep", "voor", "het", "bedrijfsleven"), "cbb"),
    (("raad", "van", "state"), "raadvanstate"),
    (("afdeling", "bestuursrechtspraak"), "afdelingbestuursrechtspraak"),
    (("hoge", "raad"), "hogeraad"),
    (("rechter", "commissaris"), "rechtercommissaris"),
)
_TOKEN = re.compile(r"\[[^\]\n]{1,60}\]|[^\W\d_]+(?:-[^\W\d_]+)*")
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+(?=[A-ZÀ-Þ\[(“\"'])")


class _Word:
    __slots__ = ("ids", "key", "text")

    def __init__(self, text: str, key: str, ids: tuple[tuple[str, str], ...]) -> None:
        self.text, self.key, self.ids = text, key, ids


def _ids(key: str) -> tuple[tuple[str, str], ...]:
    out: list[tuple[str, str]] = []
    if key in _COURTS:
        out.append((COURT, _COURTS[key]))
    if key in _ROLES:
        out.append((ROLE, _ROLES[key]))
    if key in _PARTIES:
        out.append((PARTY, _PARTIES[key]))
    return tuple(out)


def _words(text: str, names: frozenset[str]) -> list[_Word]:
    """The words of ``text``, each with what it names; an anonymised "[naam]" is one word,
    a party (and its role when it names one: "[eiser]")."""
    raw = [m.group(0) for m in _TOKEN.finditer(text)]
    out: list[_Word] = []
    i = 0
    while i < len(raw):
        token = raw[i]
        if token.startswith("["):
            inner = fold(token[1:-1]).strip()
            key = "[" + inner + "]"
            last = inner.split()[-1] if inner.split() else inner
            ids = (*(x for x in _ids(last) if x[0] != COURT), (PARTY, key))
            out.append(_Word(token, key, ids))
            i += 1
            continue
        folded = [fold(t).replace("-", "") for t in raw[i : i + 6]]
        for joined, key in _JOINED:
            if tuple(folded[: len(joined)]) == joined:
                out.append(_Word(" ".join(raw[i : i + len(joined)]), key, _ids(key)))
                i += len(joined)
                break
        else:
            key = folded[0]
            ids = _ids(key)
            if not ids and key in names:
                ids = ((PARTY, "name:" + key),)
            out.append(_Word(token, key, ids))
            i += 1
    return out


def _capitalised(text: str) -> set[str]:
    """Words written with a capital inside a sentence (not the first word)."""
    out: set[str] = set()
    for sentence in _SENTENCE_END.split(text):
        for j, m in enumerate(_TOKEN.finditer(sentence)):
            if j and m.group(0)[0].isupper():
                out.add(fold(m.group(0)).replace("-", ""))
    return out


def _compatible(said: tuple[str, str], there: tuple[str, str]) -> bool:
    kind, a = said
    b = there[1]
    if a == b or not a or not b:
        return True
    return kind == COURT and b in _COURT_MAY_NAME.get(a, set())


def _conflict(said: Sequence[_Word], there: Sequence[_Word]) -> bool:
    """Both stretches name someone of one kind, and nothing the sentence names there may
    be what the passage names there."""
    said_ids = [x for w in said for x in w.ids]
    there_ids = [x for w in there for x in w.ids]
    if not said_ids or not there_ids:
        return False
    for kind in (COURT, ROLE, PARTY):
        mine = [x for x in said_ids if x[0] == kind]
        theirs = [x for x in there_ids if x[0] == kind]
        if mine and theirs and not any(_compatible(a, b) for a in mine for b in theirs):
            return True
    return False


def substituted(sentence: str, passage: str) -> str | None:
    """The words of ``sentence`` that name a court or party where the passage sentence it
    copies names another one of the same kind (``None`` when there is none, or when the
    sentence copies no passage sentence closely enough to say what stands where)."""
    return copy_substitution(sentence, passage)[1]


def copy_substitution(
    sentence: str, passage: str, names: frozenset[str] | None = None
) -> tuple[int, str | None]:
    """How many of the sentence's words the passage sentence that it copies most of holds in
    order (0 when it copies none closely enough), and what ``substituted`` names there.
    ``names``: the words that name a party (by default those both write capitalised)."""
    if names is None:
        names = frozenset(_capitalised(passage) & _capitalised(sentence))
    said = _words(sentence, names)
    if len(said) < _MIN_WORDS:
        return 0, None
    said_keys = [w.key for w in said]
    best: tuple[int, SequenceMatcher[str], list[_Word]] | None = None
    for piece in _SENTENCE_END.split(passage):
        there = _words(piece, names)
        matcher = SequenceMatcher(None, said_keys, [w.key for w in there], autojunk=False)
        aligned = sum(block.size for block in matcher.get_matching_blocks())
        if best is None or aligned > best[0]:
            best = (aligned, matcher, there)
    if best is None or best[0] < max(_MIN_WORDS, _MIN_ALIGNED * len(said)):
        return 0, None
    aligned, matcher, there = best
    codes = matcher.get_opcodes()
    for tag, i1, i2, j1, j2 in codes:
        if tag != "replace" or min(i2 - i1, j2 - j1) > _MAX_SPAN:
            continue
        for mine, theirs in _edges(said[i1:i2], there[j1:j2]):
            if _conflict(mine, theirs):
                return aligned, " ".join(w.text for w in mine)
    return aligned, _transposed(codes, said, there)


def closest_copies(sentence: str, passages: Sequence[str]) -> tuple[list[int], str | None]:
    """The positions in ``passages`` of those that ``sentence`` copies most closely (all of
    them when it copies none closely enough), and what ``substituted`` names when each of
    those names another court or party. A looser passage (the same point restated elsewhere
    in the decision) does not make a copy with another court, party or negation in it a
    faithful one."""
    # a name is one wherever the passages write it: a one-sentence passage that says
    # "[eiser]" where the sentence says "De Tolplas" does not know that Tolplas is a party
    written = set().union(*(_capitalised(p) for p in passages)) if passages else set()
    names = frozenset(_capitalised(sentence) & written)
    found = [copy_substitution(sentence, p, names) for p in passages]
    closest = max((aligned for aligned, _ in found), default=0)
    if closest == 0:
        return list(range(len(passages))), None
    at = [i for i, (aligned, _) in enumerate(found) if aligned == closest]
    words = [found[i][1] for i in at]
    return at, (words[0] if all(words) else None)


def _edges(
    mine: Sequence[_Word], theirs: Sequence[_Word]
) -> list[tuple[Sequence[_Word], Sequence[_Word]]]:
    """The stretches to compare: both, when both are short; else the short one against
    either end of the long one, where it stands next to what both sides share (a passage
    sentence that the splitter kept with the one before it: "... ondersteuning. 4.2 De
    rechtbank is van oordeel ...")."""
    if max(len(mine), len(theirs)) <= _MAX_SPAN:
        return [(mine, theirs)]
    if len(mine) <= _MAX_SPAN:
        n = len(mine)
        return [(mine, theirs[:n]), (mine, theirs[-n:])]
    n = len(theirs)
    return [(mine[:n], theirs), (mine[-n:], theirs)]


def _transposed(
    codes: Sequence[tuple[str, int, int, int, int]], said: Sequence[_Word], there: Sequence[_Word]
) -> str | None:
    """Two who trade places ("heeft eiser verweerder een voorschot toegekend" for "heeft
    verweerder eiser ..."): the alignment keeps one of them and reads the other as left out
    on one side and added on the other, around it."""
    for before, middle, after in zip(codes, codes[1:], codes[2:], strict=False):
        if middle[0] != "equal" or middle[2] - middle[1] > _MAX_SPAN:
            continue
        kinds = {before[0], after[0]}
        if kinds != {"insert", "delete"}:
            continue
        moved = [there[j] for j in range(before[3], before[4])] + [
            said[i] for i in range(before[1], before[2])
        ]
        back = [said[i] for i in range(after[1], after[2])] + [
            there[j] for j in range(after[3], after[4])
        ]
        if len(moved) != 1 or len(back) != 1 or moved[0].key != back[0].key:
            continue
        kept = said[middle[1] : middle[2]]
        if _conflict(kept, moved):
            return " ".join(w.text for w in kept)
    return None


__all__ = ["closest_copies", "copy_substitution", "substituted"]

"""Negation and reversal: the grounding gate's check that a sentence does not turn round
what its supporting passage says (app/gates/evidence.py has the rest of what a passage must
hold: content words, facts, markers).

- ``negation_mismatch``: a negation (niet, geen, nooit, ...) on one side that the other
  side's same statement lacks, "onrechtmatig" against "rechtmatig", or an outcome or a role
  turned round ("vernietigd" where the passage says "bevestigd", "verhuurder" for "huurder");
- ``compound_swap``: another compound of the same head ("inkomstenbelasting" where the
  passage says "omzetbelasting").

Nothing here touches the database or the encoder.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from app.gates.evidence import NEGATIONS, STOPWORDS, fold, stem

# Outcomes and roles that turn a statement round without a negation (folded, as `words`
# gives them). A sentence word whose opposite the passage holds, while the passage lacks the
# word itself, is a reversal ("De Raad heeft de uitspraak vernietigd" against "... bevestigd").
_OPPOSITE_PAIRS = """
    bevestigd:vernietigd bevestigt:vernietigt bevestigen:vernietigen bevestiging:vernietiging
    toegewezen:afgewezen toewijst:afwijst toewijzen:afwijzen toewijzing:afwijzing
    terecht:onrechte aanvaard:verworpen aanvaardt:verwerpt verwerpt:vernietigt
    bekrachtigd:vernietigd bekrachtigt:vernietigt bekrachtigen:vernietigen
    bekrachtiging:vernietiging gehandhaafd:vernietigd handhaaft:vernietigt
    handhaven:vernietigen verleend:geweigerd verleent:weigert verlenen:weigeren
    faalt:slaagt falen:slagen toegekend:afgewezen verminderd:verhoogd vermindert:verhoogt
    verminderen:verhogen vermindering:verhoging gedeeltelijk:volledig maand:jaar
    maandelijks:jaarlijks
    vrijgesproken:veroordeeld vrijspraak:veroordeling toegestaan:verboden
    hoger:lager hogere:lagere meer:minder groter:kleiner grotere:kleinere langer:korter
    huurder:verhuurder huurders:verhuurders huurster:verhuurster koper:verkoper
    kopers:verkopers werkgever:werknemer werkgevers:werknemers eiser:gedaagde
    eisers:gedaagden eiseres:gedaagde verzoeker:verweerder verzoekster:verweerster
    appellant:geintimeerde appellante:geintimeerde opdrachtgever:opdrachtnemer
    schuldeiser:schuldenaar crediteur:debiteur belanghebbende:inspecteur
"""
OPPOSITES: dict[str, frozenset[str]] = {}
for _pair in _OPPOSITE_PAIRS.split():
    _a, _b = _pair.split(":")
    OPPOSITES[_a] = OPPOSITES.get(_a, frozenset()) | {_b}
    OPPOSITES[_b] = OPPOSITES.get(_b, frozenset()) | {_a}

# Heads of Dutch compounds whose first part names which one, among kinds that do not
# include each other: "inkomstenbelasting" is not "omzetbelasting", a "navorderingsaanslag"
# no "naheffingsaanslag", "huurtoeslag" no "zorgtoeslag" (``compound_swap``). Heads whose
# kinds nest or have synonyms were measured flagging faithful sentences by two reviews and
# are left out: straf, rechter, vergunning ("vrijheidsstraf" holds "gevangenisstraf"), and
# vonnis, arrest, uitspraak, overeenkomst, termijn, boete ("verstekvonnis" may be an
# "eindvonnis", an "uitzendovereenkomst" is an "arbeidsovereenkomst", "appeltermijn" is
# "beroepstermijn", a "verzuimboete" is a "bestuursboete").
COMPOUND_HEADS = frozenset({"belasting", "heffing", "aanslag", "toeslag"})
# first parts that name the general kind ("belastingaanslag")
_GENERAL = frozenset({"belasting", "heffing"})
_HEADS_LONGEST_FIRST = sorted(COMPOUND_HEADS, key=lambda h: (-len(h), h))
_LINKS = ("s", "en", "e")  # what joins the parts: "inkomsten|belasting", "loon|s|..."



# --- negation ------------------------------------------------------------------------------

_CONTEXT = 4  # content words either side of a negation that say what it negates
BREAK = "|"  # where a clause ends, among ``negation_words``
END = "."  # after a BREAK where a sentence ends (no content word, no negation)
# conjunctions that open a clause of their own: "niet X, maar Y", "zodat ... geen"
_OPENS_CLAUSE = frozenset(
    {"maar", "doch", "zodat", "omdat", "terwijl", "hoewel", "aangezien", "want"}
)
# a colon or full stop ends a clause only before a space ("artikel 6:162", "art. 3" stay whole)
_TOKEN = re.compile(r"[a-z]+|[,;()]|[:.!?](?=\s|$)")
# "niet alleen ... maar ook" adds; it does not negate (without a "maar" it does: "niet
# uitsluitend bevoegd"); "zonder meer" means "simply"
_ADDITIVE = frozenset({"alleen", "slechts", "enkel", "uitsluitend"})
_SENTENCE_END = frozenset({".", "!", "?"})
# abbreviations whose full stop ends no clause ("art. 3", "jo. art. 6"; a single letter
# before it is one too: "i.c. geen", "J. Smith")
_ABBREVIATED = frozenset({"art", "artt", "nr", "nrs", "jo", "resp", "bijv", "vgl", "blz", "pag"})


def negation_words(text: str) -> list[str]:
    """The folded words of ``text`` with ``BREAK`` where a clause ends (punctuation, or a
    conjunction that opens one), and ``END`` after it where a sentence ends: what the
    negation check reads. A negation says something
    of its own clause: the words of the next one are not what it negates."""
    out: list[str] = []
    tokens = _TOKEN.findall(fold(text))
    for i, word in enumerate(tokens):
        before = tokens[i - 1] if i else ""  # the token, not the last word kept ("art. 3.")
        if word == "." and (before in _ABBREVIATED or (before.isalpha() and len(before) == 1)):
            continue
        if not word[0].isalpha() or word in _OPENS_CLAUSE:
            if out and out[-1] not in (BREAK, END):
                out.append(BREAK)
            if word in _SENTENCE_END and out and out[-1] == BREAK:
                out.append(END)
            if not word[0].isalpha():
                continue
        following = tokens[i + 1] if i + 1 < len(tokens) else ""
        if word == "zonder" and following == "meer":
            continue
        if word == "niet" and following in _ADDITIVE and _but_follows(tokens, i + 2):
            continue
        out.append(word)
    return out


def _but_follows(tokens: Sequence[str], start: int) -> bool:
    """A "maar" or "doch" later in the same sentence."""
    for token in tokens[start:]:
        if token in _SENTENCE_END:
            return False
        if token in ("maar", "doch"):
            return True
    return False


def _content(word: str) -> bool:
    return len(word) > 1 and word not in STOPWORDS


@dataclass(frozen=True)
class _Negation:
    """A negation in a text: the word, the stems near it in its clause (what it negates),
    the first content word after it (the word it negates most often: "niet juist", "geen
    sprake", "niet bevoegd") and every stem of its clause (where the other side's negation
    may stand and still say the same)."""

    word: str
    near: frozenset[str]
    head: str | None
    clause: frozenset[str]
    own: frozenset[str]  # ``near`` inside its own clause only
    at: int  # its index among the tokens

    def agrees(self, other: Sequence[_Negation]) -> bool:
        """The other side negates the same: a negation there negates the same word, or half
        of what this one negates stands in a negated clause there (or half of its own
        clause's words, where ``near`` reaches back)."""
        if self.head is not None and any(n.head == self.head for n in other):
            return True
        negated = _negated(other)
        if self.own and self.own != self.near and len(self.own & negated) >= 0.5 * len(self.own):
            return True
        return len(self.near & negated) >= 0.5 * len(self.near)


def _negations(tokens: Sequence[str]) -> list[_Negation]:
    out = []
    for i, word in enumerate(tokens):
        if word not in NEGATIONS:
            continue
        near: list[str] = []
        clause: list[str] = []
        for step in (-1, 1):
            j, reach = i + step, _CONTEXT + (2 if step < 0 else 3)
            while 0 <= j < len(tokens) and tokens[j] != BREAK:
                (near if abs(j - i) <= reach else clause).append(tokens[j])
                j += step
        head = next((w for w in tokens[i + 1 : i + 4] if w == BREAK or _content(w)), None)
        stems = {stem(w) for w in near if _content(w)}
        own = frozenset(stems)
        opens = i == 0 or tokens[i - 1] in (BREAK, END)
        if len(stems) < 2 or opens:
            # "..., maar daarvan is geen sprake", "M.i. is dat niet het geval", "het
            # oordeel, gelet op ..., niet juist is": what it negates is said before it
            j, breaks = i - 1, 0
            while j >= 0 and breaks <= 2 and len(stems) < _CONTEXT + 2:
                breaks += tokens[j] == BREAK
                if _content(tokens[j]):
                    stems.add(stem(tokens[j]))
                j -= 1
        out.append(
            _Negation(
                word,
                frozenset(stems),
                None if head in (None, BREAK) else stem(head),
                frozenset(stems | {stem(w) for w in clause if _content(w)}),
                own,
                i,
            )
        )
    return out


def _negated(negations: Sequence[_Negation]) -> set[str]:
    out: set[str] = set()
    for negation in negations:
        out |= negation.clause
    return out


_NOCH_REACH = 12  # words within which a "noch" continues the negation before it


def _counted_negations(tokens: Sequence[str]) -> list[str]:
    """The negations that count: "noch" after a negation of the same statement adds none
    ("noch A noch B" = "A noch B" = "niet A noch B"; "niets gesteld of gebleken")."""
    out: list[str] = []
    last: int | None = None
    for i, word in enumerate(tokens):
        if word not in NEGATIONS:
            continue
        if word != "noch" or last is None or i - last > _NOCH_REACH:
            out.append(word)
        last = i
    return out


def negation_mismatch(sentence: str, passage: str) -> str | None:
    """A negation that the other side's same statement lacks, as the word concerned; None
    when both agree (or the passage does not say the same thing at all: containment
    judges that)."""
    return negation_mismatch_words(negation_words(sentence), negation_words(passage))


def _aligned_span(s_tokens: Sequence[str], p_tokens: Sequence[str]) -> Sequence[str] | None:
    """The stretch of the passage that says what the sentence says: from its first content
    word to its last (the stretch closest to the sentence's length, widened by the
    sentence's own leading and trailing function words); None when the passage has no such
    stretch of similar length."""
    content = [i for i, w in enumerate(s_tokens) if _content(w)]
    if len(content) < 3:
        return None
    first, last = s_tokens[content[0]], s_tokens[content[-1]]
    starts = [i for i, w in enumerate(p_tokens) if w == first]
    ends = [j for j, w in enumerate(p_tokens) if w == last]
    target = content[-1] - content[0]  # the stretch closest to the sentence's own length
    best: tuple[int, int] | None = None
    for i in starts:
        for j in ends:
            if j > i and (best is None or abs(j - i - target) < abs(best[1] - best[0] - target)):
                best = (i, j)
    if best is None or best[1] - best[0] + 1 > 1.5 * len(s_tokens) + 3:
        return None
    if best[1] - best[0] < 0.6 * target:  # a stretch of a sentence that says it in another order
        return None
    # the sentence's own leading and trailing function words, and two more (a reworded
    # sentence drops some: "Zonder zulk voorziening" for "Zonder zulk een voorziening"),
    # not past the end of the passage's clause
    start, end = best[0], best[1] + 1
    for _ in range(content[0] + 2):
        if start == 0 or p_tokens[start - 1] == BREAK:
            break
        start -= 1
    for _ in range(len(s_tokens) - 1 - content[-1] + 2):
        if end == len(p_tokens) or p_tokens[end] == BREAK:
            break
        end += 1
    return p_tokens[start:end]


def _unsaid(negation: _Negation, s_stems: set[str], said_stems: set[str]) -> bool:
    """A "zonder" of the passage in a clause of its own whose words the sentence does not
    use (", zonder verhoging,"), in a sentence that says nothing the passage's sentence does
    not (another sentence of the window does not count): it
    qualifies what the clause before says, and leaving it out says less, not the opposite
    ("een verhoogde aanslag" says something else). Other negations standing alone negate
    what was said before them ("M.i. is dat niet het geval", "daarvan is geen sprake")."""
    return (
        negation.word == "zonder"
        and bool(negation.own)
        and not negation.own & s_stems
        and s_stems <= said_stems
    )


def _same_heads(
    s_negations: Sequence[_Negation], p_negations: Sequence[_Negation], span: Sequence[str]
) -> bool:
    """Every negation of the sentence negates a word that one of ``p_negations`` (those of
    the passage's sentences that say what it says) negates, and every negation of the
    passage's stretch a word that one of the sentence negates."""
    s_heads = [n.head for n in s_negations]
    p_heads = {n.head for n in p_negations}
    span_heads = [n.head for n in _negations(span)]
    return (
        None not in s_heads
        and None not in span_heads
        and set(s_heads) <= p_heads
        and set(span_heads) <= set(s_heads)
    )


def _saying_sentences(p_tokens: Sequence[str], s_stems: set[str]) -> set[int]:
    """The indexes of the passage's tokens in its sentences that say most of what the
    sentence says (at least three quarters as many of its content words as the best one)."""
    spans: list[tuple[int, int, int]] = []  # start, end, content words shared
    start = 0
    for end in [*(i for i, t in enumerate(p_tokens) if t == END), len(p_tokens)]:
        shared = {stem(w) for w in p_tokens[start:end] if _content(w)} & s_stems
        spans.append((start, end, len(shared)))
        start = end + 1
    best = max(n for *_, n in spans)
    return {i for a, b, n in spans if n >= 0.75 * best for i in range(a, b)}


def negation_mismatch_words(s_tokens: Sequence[str], p_tokens: Sequence[str]) -> str | None:
    """``negation_mismatch`` on ``negation_words``, as the gate keeps them."""
    s_stems = {stem(w) for w in s_tokens if _content(w)}
    p_stems = {stem(w) for w in p_tokens if _content(w)}
    s_negations, p_negations = _negations(s_tokens), _negations(p_tokens)
    said = _saying_sentences(p_tokens, s_stems)
    # what the passage's sentences that say it say (not another sentence of the window)
    said_stems = {stem(w) for i, w in enumerate(p_tokens) if i in said and _content(w)}
    span = _aligned_span(s_tokens, p_tokens)
    if span is not None:
        s_neg, p_neg = _counted_negations(s_tokens), _counted_negations(span)
        # "noch ... noch" against one "noch", a "niet" added; unless every negation on either
        # side negates a word that the other side negates too, said elsewhere in the same
        # sentence of the passage (Dutch moves "zonder verhoging" before the verb: the
        # stretch misses it)
        same = _same_heads(s_negations, [n for n in p_negations if n.at in said], span)
        left_out = sum(1 for n in _negations(span) if _unsaid(n, s_stems, said_stems))
        if len(s_neg) != len(p_neg) - left_out and not same:
            extra = [t for t in s_neg if t not in p_neg] or [t for t in p_neg if t not in s_neg]
            return (extra or s_neg or p_neg)[0]
    s_negated = _negated(s_negations)
    for negation in s_negations:  # the sentence negates what the passage states
        site = negation.near
        stated = len(site) >= 2 and len(site & p_stems) >= 0.6 * len(site)
        if stated and not negation.agrees(p_negations):
            return negation.word
    for negation in p_negations:  # the sentence states what the passage negates
        if _unsaid(negation, s_stems, said_stems):
            continue
        site = negation.near
        stated = len(site) >= 2 and len(site & s_stems) >= 0.75 * len(site)
        before = site - negation.own  # what it reaches back to, where it does
        stated = stated or (len(before) >= 2 and len(before & s_stems) >= 0.75 * len(before))
        if stated and not negation.agrees(s_negations):
            return negation.word
        # the word it negates, stated beside what stands near it, and negated nowhere (in a
        # sentence of the passage that says what the sentence says, not in the one before:
        # "... besloot geen teruggaaf te verlenen. Het Hof ... heeft een teruggaaf verleend.")
        shared = site & s_stems
        head_stated = negation.head in shared and negation.head not in s_negated
        if head_stated and len(shared) >= max(2, 0.5 * len(site)) and negation.at in said:
            return negation.word
    s_words, p_words = set(s_tokens), set(p_tokens)
    for word in s_words:  # "onrechtmatig" against "rechtmatig", either way
        if len(word) >= 7 and word.startswith("on") and word[2:] in p_words and word not in p_words:
            return word
        if len(word) >= 5 and "on" + word in p_words and word not in p_words:
            return word
        # a swap: the sentence says A and not B where the passage says B and not A (a
        # sentence naming both parties, or "onder meer ... minder", is no reversal)
        opposite = OPPOSITES.get(word, frozenset())
        if word not in p_words and opposite & p_words and not opposite & s_words:
            return word
    return None


def _compound(word: str) -> tuple[str, str] | None:
    """(first part, head) of a compound on one of ``COMPOUND_HEADS``, or None."""
    for head in _HEADS_LONGEST_FIRST:
        if word.endswith(head) and len(word) >= len(head) + 3:
            first = word[: -len(head)]
            for link in _LINKS:
                if first.endswith(link) and len(first) > len(link) + 2:
                    first = first[: -len(link)]
                    break
            return first, head
    return None


def compound_swap(s_tokens: Sequence[str], p_tokens: Sequence[str]) -> str | None:
    """A compound of the sentence that the passage does not hold while it holds another of
    the same head ("inkomstenbelasting" where the passage says "omzetbelasting"): another
    one of its kind, as a changed date is another date. A first part such as "belasting"
    names the general kind ("belastingaanslag" for "naheffingsaanslag") and is no swap; a
    plural is its singular."""
    held = {_singular(w) for w in p_tokens}
    kinds: dict[str, set[str]] = {}
    for word in held:
        parts = _compound(word)
        if parts is not None:
            kinds.setdefault(parts[1], set()).add(parts[0])
    for word in s_tokens:
        if _singular(word) in held:
            continue
        parts = _compound(_singular(word))
        if parts is None or parts[1] not in kinds:
            continue
        first, head = parts
        if first in _GENERAL or any(first in other for other in kinds[head]):
            continue
        return word
    return None


def _singular(word: str) -> str:
    """A plural of a listed head as its singular ("toeslagen" -> "toeslag")."""
    for head in _HEADS_LONGEST_FIRST:
        for ending in ("en", "s"):
            if word.endswith(head + ending):
                return word[: -len(ending)]
    return word

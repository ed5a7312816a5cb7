"""Judging answer sentences against the passages of returned chunks (no database here).

A sentence is supported when one passage of a returned chunk holds it:

1. score = w * containment + (1 - w) * cosine, against every passage; the best passage is
   the evidence, and the score must reach the threshold (``no_support`` otherwise). ``w``
   and the threshold are calibrated per encoder (app/gates/calibration.py): containment
   dominates, since an encoder trained on English scores all Dutch pairs alike;
2. among the passages that reach the threshold (best first), the first whose facts and
   negations agree with the sentence is the evidence; when none does, the sentence is
   unsupported whatever its score, with ``fact_mismatch`` (one per fact, the fact as
   written in the sentence) and ``negation`` reasons read against the best passage;
3. a sentence with markers ("[2]", "[1, 3]") must be held by a result at one of those
   ranks: otherwise ``cited_supported`` is false and, when another result holds it,
   ``misattributed`` names that result; a rank past the results is
   ``marker_out_of_range``, a cited result that may no longer be shown ``cited_unavailable``.
   Such a sentence is unsupported: shipped as is, it would point the reader at the wrong
   source;
4. a sentence that names a court, a role, a procedure or an outcome that no returned chunk
   speaks of (app/gates/referents.py) is unsupported, ``fact_mismatch`` naming the word; an
   outcome ("slaagt", "afgewezen", "vernietigt") must stand in the evidence passage itself,
   checked with its facts in step 2;
5. a line that only points at a source ("Zie ECLI:...", "Vgl. art. 6:162 BW.") is held
   where each source it cites is held (app/gates/citing.py): a returned chunk of that
   decision or a passage citing it, with what else it writes (a date, a court).
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt

from app.gates.citing import citing_detail, citing_facts, only_cites
from app.gates.evidence import (
    Fact,
    FactIndex,
    FactSite,
    content_stems,
    extract_facts,
    fact_sites,
    leading_name,
    misbound_facts,
    missing_facts,
    said_words,
    split_markers,
    stem,
    title_stems,
    with_document,
    words,
)
from app.gates.negation import compound_swap, negation_mismatch_words, negation_words
from app.gates.passages import ChunkPassages
from app.gates.referents import RetrievalReferents, held_outcomes, unheld_outcome
from app.gates.roles import closest_copies

Matrix = npt.NDArray[np.float32]

CANDIDATES = 8  # passages over the threshold whose facts are checked (those holding them first)
# content words of a sentence that its passage may lack, whatever the share: at threshold
# 0.7 a share lets 20 copied content words carry 8 of their own (a review); 5 cost no
# faithful sentence of the written answers (4: 1-3 in each set; docs/grounding.md)
UNHELD_MAX = 5
FITTING_MAX = 64  # passages over the threshold looked through for the ones holding the facts


@dataclass(frozen=True)
class Calibration:
    """How a sentence's best passage is scored and what it must reach, for one encoder."""

    threshold: float
    lexical_weight: float
    source: str = "default"  # which entry of the calibration file (or a setting) it is


@dataclass(frozen=True)
class ReturnedChunk:
    """A chunk this retrieval returned that may ground the answer (still visible, content
    as audited), its rank in the retrieval and its passages."""

    chunk_id: str
    rank: int
    passages: ChunkPassages
    document: FactIndex | None = None  # what its document's title states (document_facts)


@dataclass(frozen=True)
class Reason:
    kind: str
    detail: str

    def as_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "detail": self.detail}


@dataclass(frozen=True)
class Evidence:
    chunk_id: str
    rank: int
    passage: str

    def as_dict(self) -> dict[str, Any]:
        return {"chunk_id": self.chunk_id, "rank": self.rank, "passage": self.passage}


@dataclass(frozen=True)
class SentenceResult:
    text: str
    supported: bool
    best_chunk_id: str | None
    similarity: float | None
    reasons: list[Reason] = field(default_factory=list)
    evidence: Evidence | None = None
    cited: list[int] | None = None
    cited_supported: bool | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "text": self.text,
            "supported": self.supported,
            "best_chunk_id": self.best_chunk_id,
            "similarity": self.similarity,
            "reasons": [r.as_dict() for r in self.reasons],
            "evidence": None if self.evidence is None else self.evidence.as_dict(),
            "cited": self.cited,
            "cited_supported": self.cited_supported,
        }


class _Passages:
    """Every passage of the returned chunks, flattened: owner, vectors, stem incidence."""

    def __init__(self, chunks: Sequence[ReturnedChunk]) -> None:
        self.chunks = list(chunks)
        self.owner: list[int] = []
        self.local: list[int] = []
        vectors = []
        titles: list[set[str]] = []
        vocabulary: dict[str, int] = {}
        stem_rows: list[list[int]] = []
        for c, chunk in enumerate(self.chunks):
            vectors.append(chunk.passages.vectors)
            titles.append(title_stems(chunk.document))
            for p, stems in enumerate(chunk.passages.stems):
                self.owner.append(c)
                self.local.append(p)
                stem_rows.append([vocabulary.setdefault(s, len(vocabulary)) for s in stems])
        self.vocabulary = vocabulary
        self.vectors: Matrix = np.vstack(vectors) if vectors else np.zeros((0, 0), dtype=np.float32)
        # stems x passages (a row per stem: a sentence's containment sums its stems' rows)
        self.incidence = np.zeros((max(1, len(vocabulary)), len(stem_rows)), dtype=np.float32)
        for column, row in enumerate(stem_rows):
            self.incidence[row, column] = 1.0
        self.owner_array = np.asarray(self.owner, dtype=np.int64)
        # A name the sentence gives is held by every passage whose document's title holds
        # it: "Volgens de Hoge Raad ..." names the decision's own court, which its reasons
        # never write (a check of 2026-12-06: such attributions cost faithful paraphrases
        # their support). Only names: a court's name holds words ("Centrale Raad van
        # Beroep") that in lower case are content of their own.
        self.titled: dict[str, npt.NDArray[np.float32]] = {}
        for stem_ in set().union(*titles) if titles else set():
            self.titled[stem_] = np.asarray(
                [stem_ in titles[c] for c in self.owner], dtype=np.float32
            )
        # the proper names of all the returned chunks: a sentence that opens with one must
        # find it in its supporting passage
        self.names: frozenset[str] = frozenset().union(*(c.passages.names for c in self.chunks))
        # the courts, roles, procedures and outcomes they speak of
        self.referents = RetrievalReferents(w for c in self.chunks for w in c.passages.words)
        self._held: dict[int, FactIndex] = {}
        self._outcomes: dict[int, set[int]] = {}

    def __len__(self) -> int:
        return len(self.owner)

    def text(self, i: int) -> str:
        return self.chunks[self.owner[i]].passages.texts[self.local[i]]

    def facts(self, i: int) -> FactIndex:
        """What passage ``i`` holds, its document's title included (built when asked)."""
        held = self._held.get(i)
        if held is None:
            chunk = self.chunks[self.owner[i]]
            own = chunk.passages.facts[self.local[i]]
            held = self._held[i] = with_document(own, chunk.document)
        return held

    def outcomes(self, i: int) -> set[int]:
        """The outcomes passage ``i`` states (built when asked, once: every sentence of an
        answer may look at the same candidates)."""
        held = self._outcomes.get(i)
        if held is None:
            words = self.chunks[self.owner[i]].passages.words[self.local[i]]
            held = self._outcomes[i] = held_outcomes(words)
        return held

    def containment(self, stems: set[str], names: AbstractSet[str] = frozenset()) -> Matrix:
        """Per passage, the share of ``stems`` it holds; a stem among ``names`` (the
        sentence's names) is held by its document's title too."""
        if not stems:
            return np.zeros(len(self), dtype=np.float32)
        titled = [s for s in stems if s in names and s in self.titled]
        rows = [self.vocabulary[s] for s in stems if s in self.vocabulary and s not in titled]
        held: Matrix = self.incidence[rows].sum(axis=0)
        for s in titled:
            own = self.incidence[self.vocabulary[s]] if s in self.vocabulary else 0.0
            held = held + np.maximum(own, self.titled[s])
        return np.asarray(held / len(stems), dtype=np.float32)


@dataclass
class _Verdict:
    best: int | None  # passage index of the evidence
    score: float | None
    reasons: list[Reason]

    @property
    def holds(self) -> bool:
        return self.best is not None and not self.reasons


def _verdict(
    passages: _Passages,
    scores: npt.NDArray[np.float32],
    mask: npt.NDArray[np.bool_] | None,
    core: tuple[str, ...],
    facts: list[Any],
    threshold: float,
    bound: list[FactSite],
    sentence: str,
) -> _Verdict:
    candidates = np.arange(len(passages)) if mask is None else np.flatnonzero(mask)
    if candidates.size == 0:
        return _Verdict(None, None, [Reason("no_support", "no passage to compare with")])
    order = candidates[np.argsort(-scores[candidates], kind="stable")]
    best = int(order[0])
    if scores[best] < threshold:
        return _Verdict(best, float(scores[best]), [Reason("no_support", "")])
    above = [int(i) for i in order[: int(np.count_nonzero(scores[order] >= threshold))]]
    if facts:
        # the passages that hold every fact come first: when many score alike (a holding
        # that several returned decisions repeat), the one that states this date or amount
        # is not crowded out by the first CANDIDATES that state another (among the best
        # FITTING_MAX: a bound on the work of one sentence)
        above = above[:FITTING_MAX]
        above.sort(key=lambda i: bool(missing_facts(facts, passages.facts(i))))
    first_reasons: list[Reason] | None = None
    # a copied sentence is judged against the passages it copies most closely: a looser one
    # does not make a copy with another court, party or a negation in it faithful
    considered = above[:CANDIDATES]
    closest, someone_else = closest_copies(sentence, [passages.text(i) for i in considered])
    for index in [considered[k] for k in closest]:
        chunk = passages.chunks[passages.owner[index]].passages
        local = passages.local[index]
        held = passages.facts(index)
        wrong = missing_facts(facts, held) + misbound_facts(bound, held)
        reasons = [Reason("fact_mismatch", f.text) for f in wrong]
        negated = negation_mismatch_words(core, chunk.words[local])
        if negated is not None:
            reasons.append(Reason("negation", negated))
        swapped = compound_swap(core, chunk.words[local])
        if swapped is not None:
            reasons.append(Reason("fact_mismatch", swapped))
        if someone_else is not None:  # "de kantonrechter" where it says "de voorzieningenrechter"
            reasons.append(Reason("fact_mismatch", someone_else))
        decided = unheld_outcome(core, passages.outcomes(index))
        if decided is not None and decided != negated:  # "gegrond" where it says "ongegrond"
            reasons.append(Reason("fact_mismatch", decided))
        if not reasons:
            return _Verdict(index, float(scores[index]), [])
        if first_reasons is None:
            first_reasons = reasons
    return _Verdict(best, float(scores[best]), first_reasons or [Reason("no_support", "")])


def _citing_verdict(
    passages: _Passages, facts: Sequence[Fact], mask: npt.NDArray[np.bool_] | None
) -> _Verdict:
    """A line that only cites (citing.py): each source it cites is held by a passage (of
    that decision, its title naming it, or one that cites it), and what else it writes (a
    date, a court, a consideration's number) by one of those passages."""
    candidates = range(len(passages)) if mask is None else [int(i) for i in np.flatnonzero(mask)]
    sources = citing_facts(facts)
    holders: list[int] = []
    for source in sources:
        found = [i for i in candidates if not missing_facts([source], passages.facts(i))]
        if not found:
            return _Verdict(None, None, [Reason("no_support", citing_detail([source]))])
        holders += found
    unheld = [
        f
        for f in facts
        if f not in sources and all(missing_facts([f], passages.facts(i)) for i in holders)
    ]
    return _Verdict(holders[0], 1.0, [Reason("fact_mismatch", f.text) for f in unheld])


def judge_sentences(
    sentences: Sequence[str],
    sentence_vectors: Matrix,
    chunks: Sequence[ReturnedChunk],
    result_count: int,
    calibration: Calibration,
) -> list[SentenceResult]:
    """Each sentence's verdict. ``chunks`` are the returned chunks that may ground the
    answer; ``result_count`` how many results the retrieval returned (markers past it are
    out of range, markers at ranks not in ``chunks`` cite a result no longer available)."""
    passages = _Passages(chunks)
    threshold, weight = calibration.threshold, calibration.lexical_weight
    by_rank = {c.rank: c for c in chunks}
    out: list[SentenceResult] = []
    for i, sentence in enumerate(sentences):
        core, ranks = split_markers(sentence)
        cited = ranks or None
        if len(passages) == 0:
            reasons = [Reason("no_support", "no returned chunk may ground the answer")]
            reasons += _marker_reasons(ranks, result_count, by_rank)
            out.append(
                SentenceResult(
                    sentence, False, None, None, reasons, None, cited, False if ranks else None
                )
            )
            continue
        facts = extract_facts(core)
        names = {stem(w) for f in facts if f.kind == "name" for w in words(f.text)}
        stems = content_stems(core, facts)
        lexical = passages.containment(stems, names)
        cosine = passages.vectors @ sentence_vectors[i]
        scores = np.asarray(weight * lexical + (1.0 - weight) * cosine, dtype=np.float32)
        # a share lets a long sentence carry that many more unheld words (a review: a copied
        # sentence with a clause of its own added): more than UNHELD_MAX falls short
        unheld = np.rint((1.0 - lexical) * len(stems)) > UNHELD_MAX
        scores = np.where(unheld, np.minimum(scores, threshold - 1e-3), scores).astype(np.float32)
        opener = leading_name(core, passages.names)
        if opener is not None:
            facts.append(opener)
        core_words = tuple(negation_words(core))
        bound = fact_sites(core, facts)
        # it only points at a source (citing.py)
        citing = only_cites(facts, said_words(core, facts), names)
        overall = (
            _citing_verdict(passages, facts, None)
            if citing
            else _verdict(passages, scores, None, core_words, facts, threshold, bound, core)
        )
        chosen = overall
        reasons = list(overall.reasons)
        cited_supported: bool | None = None
        if ranks:
            marker_reasons = _marker_reasons(ranks, result_count, by_rank)
            mask = np.isin(
                passages.owner_array,
                [c for c, ch in enumerate(passages.chunks) if ch.rank in ranks],
            )
            cited_verdict = None
            if mask.any():
                cited_verdict = (
                    _citing_verdict(passages, facts, mask)
                    if citing
                    else _verdict(passages, scores, mask, core_words, facts, threshold, bound, core)
                )
            cited_supported = cited_verdict is not None and cited_verdict.holds
            if cited_supported and cited_verdict is not None:
                chosen, reasons = cited_verdict, []
            elif overall.holds and overall.best is not None:
                holder = passages.chunks[passages.owner[overall.best]]
                reasons.append(Reason("misattributed", f"rank {holder.rank} ({holder.chunk_id})"))
            reasons += marker_reasons
        # a citing line's court is its source's, which the source's title holds (step 2)
        unheld = None if citing else passages.referents.unheld(core_words)
        if unheld is not None:  # whatever passage scored best: no returned chunk says it
            reasons.append(Reason("fact_mismatch", unheld))
            cited_supported = False if ranks else None
        evidence = None
        if chosen.best is not None:
            holder = passages.chunks[passages.owner[chosen.best]]
            evidence = Evidence(holder.chunk_id, holder.rank, passages.text(chosen.best))
        supported = not reasons
        out.append(
            SentenceResult(
                text=sentence,
                supported=supported,
                best_chunk_id=None if evidence is None else evidence.chunk_id,
                similarity=None if chosen.score is None else round(chosen.score, 4),
                reasons=reasons,
                evidence=evidence,
                cited=cited,
                cited_supported=cited_supported,
            )
        )
    return out


def _marker_reasons(
    ranks: Sequence[int], result_count: int, by_rank: dict[int, ReturnedChunk]
) -> list[Reason]:
    reasons = []
    for rank in ranks:
        if not 1 <= rank <= result_count:
            reasons.append(
                Reason(
                    "marker_out_of_range",
                    f"[{rank}]: the retrieval returned {result_count} result(s)",
                )
            )
        elif rank not in by_rank:
            reasons.append(
                Reason(
                    "cited_unavailable",
                    f"[{rank}]: that result may no longer be shown or has changed",
                )
            )
    return reasons


def trimmed_answer(results: Sequence[SentenceResult]) -> str:
    """The answer without its unsupported sentences (markers kept), sentences joined by a
    space."""
    return " ".join(r.text for r in results if r.supported)

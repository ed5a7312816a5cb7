"""Emit-time gates (lawyer): citations against the live source, grounding against the audit.

Every call is written to the gates audit chain in the same transaction as the answer, with
hashes instead of the draft itself (drafts are privileged work product). A refused
grounding check (someone else's or an unknown retrieval) is audited too: such probing is
exactly what compliance wants to see, so those answers are returned, not raised, to let
the audit row commit.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Response
from fastapi.responses import JSONResponse

from app.audit.chain import append_gate_event, now_utc
from app.auth.service import Principal
from app.deps import (
    CitationsTurn,
    ConnDep,
    GroundingTurn,
    Lawyer,
    ResourcesDep,
    require_roles,
)
from app.ecli import find_citations
from app.errors import AppError, Unprocessable, envelope
from app.gates import repository
from app.gates.citations import CitationChecker, against_known_state, malformed_citation
from app.gates.replica import request_start, routed_grounding
from app.gates.schemas import (
    CitationOut,
    CitationsIn,
    CitationsOut,
    GroundingIn,
    GroundingOut,
    SentenceOut,
    SessionGateIn,
    SessionGateOut,
)
from app.gates.sentences import answer_sentences
from app.gates.session import answer_for, assess
from app.limits import PersonLimiter
from app.resources import Resources
from app.search.replica import PRIMARY
from app.walls.access import allowed_source_acls
from app.walls.visibility import matter_view

router = APIRouter(prefix="/v1/gates", tags=["gates"])

_RATE_LIMITED: dict[int | str, dict[str, Any]] = {
    429: {"description": "A per-person limit was reached (see Retry-After)."}
}


def person_limiter(resources: Resources) -> PersonLimiter:
    """The app's per-person limiter (one per app: the counts must be shared)."""
    return resources.limiter


def _gate_slot(principal: Lawyer, resources: ResourcesDep) -> Iterator[Principal]:
    """One of the person's in-flight gate slots, held until the route returns (before any
    transaction opens: a refused call costs no connection)."""
    limit = resources.settings.gate_max_concurrent_per_person
    with person_limiter(resources).slot("gate", principal.person_id, limit):
        yield principal


GateCaller = Annotated[Principal, Depends(_gate_slot, scope="function")]


def _sha256(value: str) -> str:
    return hashlib.sha256(value.encode("utf-8")).hexdigest()


def _with_session(request: dict[str, Any], session_id: str | None) -> dict[str, Any]:
    return {**request, "session_id": session_id} if session_id is not None else request


def citation_checker(resources: Resources) -> CitationChecker:
    """The app's checker (one per app: it holds the optional cache, keyed by the person)."""
    return resources.citation_checker


@router.post("/citations", response_model=CitationsOut, responses=_RATE_LIMITED)
def check_citations(
    principal: GateCaller, turn: CitationsTurn, body: CitationsIn, resources: ResourcesDep
) -> CitationsOut:
    settings = resources.settings
    # distinct, first appearance first; what reads as a citation but is not a well-formed
    # ECLI as written is unverifiable (fail closed), with no request to the source; an
    # ordinal listed after an ECLI ("..., 1279 en 1280") is checked as its own full ECLI
    found = find_citations(body.text)
    eclis = found.eclis
    cited = len(eclis) + len(found.malformed)
    if cited > settings.citation_max_distinct:
        raise Unprocessable(
            "too_many_citations",
            f"The text cites {cited} distinct ECLIs; at most "
            f"{settings.citation_max_distinct} are checked per call.",
            field="text",
            limit=settings.citation_max_distinct,
        )
    if eclis:
        person_limiter(resources).spend(
            "citations", principal.person_id, len(eclis), settings.citations_per_minute
        )
    # The network checks run before the transaction opens: a pooled connection should not
    # sit idle while the source answers.
    checker = citation_checker(resources)
    results = checker.check_sync(eclis, principal.person_id) if eclis else []
    results += [malformed_citation(text) for text in found.malformed]
    checked_at = now_utc()
    with resources.database.transaction() as conn:
        live = [r.ecli for r in results if r.live]
        known = repository.known_dead_cases(conn, live) if live else {}
        results = [against_known_state(r, known.get(r.ecli.upper())) for r in results]
        ok = all(r.live for r in results)
        append_gate_event(
            conn,
            person_id=principal.person_id,
            gate="citations",
            ok=ok,
            request=_with_session(
                {
                    "text_sha256": _sha256(body.text),
                    "eclis": eclis,
                    "malformed": found.malformed,
                    "follows": found.follows,
                },
                body.session_id,
            ),
            outcome={
                "citations": [
                    {"ecli": r.ecli, "live": r.live, "code": r.code, "reason": r.reason, "by": r.by}
                    for r in results
                ],
                "source": resources.settings.rechtspraak_url,
            },
        )
    return CitationsOut(
        ok=ok,
        citations=[
            CitationOut(**r.as_dict(), follows=found.follows.get(r.ecli)) for r in results
        ],
        checked_at=checked_at,
        source=resources.settings.rechtspraak_url,
    )


@router.post(
    "/grounding",
    response_model=GroundingOut,
    responses={
        403: {"description": "Not your retrieval"},
        404: {"description": "Unknown"},
        **_RATE_LIMITED,
    },
)
def check_answer_grounding(
    principal: GateCaller,
    turn: GroundingTurn,
    body: GroundingIn,
    resources: ResourcesDep,
    conn: ConnDep,
    response: Response,
) -> Any:
    settings = resources.settings
    # Size and character budget first: splitting is the first work an answer costs, so a
    # call refused for its size or its person's budget must not pay it; then one split,
    # whose sentences are what is counted, charged and checked.
    if len(body.answer) > settings.grounding_max_chars:
        raise Unprocessable(
            "answer_too_long",
            f"The answer has {len(body.answer)} characters; at most "
            f"{settings.grounding_max_chars} are checked per call.",
            field="answer",
            limit=settings.grounding_max_chars,
        )
    start = request_start(conn, resources)  # before the budget's own commit (gates/replica.py)
    limiter = person_limiter(resources)
    limiter.spend(
        "grounding_characters",
        principal.person_id,
        len(body.answer),
        settings.grounding_chars_per_minute,
    )
    sentences = answer_sentences(body.answer)
    if len(sentences) > settings.grounding_max_sentences:
        # each sentence is a model call's worth of work; bound one request's cost
        raise Unprocessable(
            "too_many_sentences",
            f"The answer has {len(sentences)} sentences; at most "
            f"{settings.grounding_max_sentences} are checked per call.",
            field="answer",
            limit=settings.grounding_max_sentences,
        )
    limiter.spend(
        "grounding_sentences",
        principal.person_id,
        len(sentences),
        settings.grounding_sentences_per_minute,
    )
    request = _with_session(
        {
            "retrieval_id": str(body.retrieval_id),
            "answer_sha256": _sha256(body.answer),
            "sentences": len(sentences),
        },
        body.session_id,
    )
    try:
        # reads on a healthy, caught-up replica when there is one (app/gates/replica.py);
        # the gate event below is written on the primary either way
        result, served_by = routed_grounding(
            conn, resources, principal.person_id, body.retrieval_id, sentences, start
        )
        # the caller's own retrieval (checked above): a check is filed under the
        # retrieval's session when it names none, so a session's record holds every check
        # of what it retrieved; one filed under another session would put that session's
        # record in doubt (a retrieval made outside any session may be checked under the
        # session the caller names, as before)
        made_in = repository.retrieval_session(conn, body.retrieval_id)
        if body.session_id is not None and made_in not in (None, body.session_id):
            raise Unprocessable(
                "session_mismatch",
                "The retrieval was made in another session than the one named.",
                field="session_id",
            )
        if body.session_id is None:
            request = _with_session(request, made_in)
    except AppError as exc:
        if exc.status not in (403, 404) and exc.code != "session_mismatch":
            raise
        append_gate_event(
            conn,
            person_id=principal.person_id,
            gate="grounding",
            ok=False,
            request=request,
            outcome={"refused": {"status": exc.status, "code": exc.code}},
        )
        return JSONResponse(envelope(exc.code, exc.message, exc.details), status_code=exc.status)
    append_gate_event(
        conn,
        person_id=principal.person_id,
        gate="grounding",
        ok=result.ok,
        request=request,
        outcome={
            "threshold": result.threshold,
            "lexical_weight": result.lexical_weight,
            "calibration": result.calibration,
            "policy_version": result.policy_version,
            "read_from": "primary" if served_by == PRIMARY else "replica",
            "sentences": [
                {
                    "index": i,
                    "supported": s.supported,
                    "best_chunk_id": s.best_chunk_id,
                    "similarity": s.similarity,
                    "reasons": [r.kind for r in s.reasons],
                    "cited": s.cited,
                    "cited_supported": s.cited_supported,
                    "text_sha256": _sha256(s.text),
                }
                for i, s in enumerate(result.sentences)
            ],
        },
    )
    response.headers["X-Ewall-Read-From"] = "primary" if served_by == PRIMARY else "replica"
    return GroundingOut(
        ok=result.ok,
        sentences=[SentenceOut(**s.as_dict()) for s in result.sentences],
        threshold=result.threshold,
        retrieval_id=result.retrieval_id,
        checked_at=now_utc(),
        trimmed_answer=result.trimmed_answer,
    )


def _session_gate_budget(
    principal: Annotated[Principal, Depends(require_roles("lawyer", "compliance"))],
    resources: ResourcesDep,
) -> Principal:
    """Charge one session gate call before the transaction opens (the call reads the whole
    session and the matrix: a refused one must cost no connection)."""
    person_limiter(resources).spend(
        "session_gate_calls",
        principal.person_id,
        1,
        resources.settings.session_gate_per_minute,
    )
    return principal


SessionAsker = Annotated[Principal, Depends(_session_gate_budget)]


@router.post(
    "/session",
    response_model=SessionGateOut,
    responses={
        404: {"description": "No retrieval of yours (or anyone's, for compliance)"},
        **_RATE_LIMITED,
    },
)
def check_session(
    body: SessionGateIn, principal: SessionAsker, conn: ConnDep, resources: ResourcesDep
) -> Any:
    """Fail closed: ``ok`` only when every matter the session read, and every document it
    read (in the matter and under the source ACL it has now), is still visible to its person
    and no two matters read are directly adverse. A lawyer asks about their own session
    (someone else's is unknown to them); compliance about anyone's."""
    everyone = principal.has_any("compliance")
    request = {"session_id": body.session_id, "scope": "all" if everyone else "own"}
    resolver = resources.require_resolver()
    # judged at the database's clock, read with the matrix's stamp (app/db/clock.py)
    snap, at = resolver.matrix_now(conn, resources.database)
    try:
        finding = assess(
            conn,
            snap,
            body.session_id,
            person_id=None if everyone else principal.person_id,
            at=at,
            readable_acls=lambda person: allowed_source_acls(
                conn, resolver.resolve_with(snap, person, at)
            ),
        )
    except AppError as exc:
        if exc.status != 404:
            raise
        append_gate_event(
            conn,
            person_id=principal.person_id,
            gate="session",
            ok=False,
            request=request,
            outcome={"refused": {"status": exc.status, "code": exc.code}},
        )
        return JSONResponse(envelope(exc.code, exc.message, exc.details), status_code=exc.status)
    answer = answer_for(finding, snap, matter_view(principal, lambda: (snap, at)), at)
    append_gate_event(
        conn,
        person_id=principal.person_id,
        gate="session",
        ok=finding.status == "ok",
        request=request,
        outcome={
            "status": finding.status,
            "reasons": finding.reasons,
            "people": finding.people,
            "policy_version": snap.version,
        },
    )
    return answer

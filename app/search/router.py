"""POST /v1/search (lawyer)."""

from __future__ import annotations

import time
from dataclasses import asdict
from typing import Annotated, Any

from fastapi import APIRouter, Header, Request, Response
from pydantic import AfterValidator, BaseModel, ConfigDict, StringConstraints

from app.deps import Admin, ConnDep, Lawyer, ResourcesDep
from app.errors import NotFound, Unprocessable
from app.search import repository, service
from app.search.replica import PRIMARY
from app.search.schemas import LABEL_MAX, SearchIn, SearchOut, one_line
from app.types import no_control, storable

router = APIRouter(prefix="/v1", tags=["search"])


@router.post("/search", response_model=SearchOut, response_model_exclude_unset=True)
def search(
    body: SearchIn,
    principal: Lawyer,
    resources: ResourcesDep,
    request: Request,
    response: Response,
    # declared for the documentation; every value given is read from the request below
    x_model: Annotated[str | None, Header(max_length=LABEL_MAX)] = None,
    x_prompt_version: Annotated[str | None, Header(max_length=LABEL_MAX)] = None,
) -> dict[str, Any]:
    started = time.perf_counter()
    body.model = _one_label(body.model, request.headers.getlist("x-model"), "X-Model")
    body.prompt_version = _one_label(
        body.prompt_version, request.headers.getlist("x-prompt-version"), "X-Prompt-Version"
    )
    # One person's searches in flight are bounded (in this process first: what that guards is
    # the process's request threads, which dozens of searches waiting on the encoder would all
    # hold, and others' searches with them; then across processes), and the budget is charged
    # before the model runs and before any connection is taken: a refused search costs
    # nobody else anything.
    settings = resources.settings
    with resources.limiter.search(
        principal.person_id, settings.search_max_concurrent_per_person, settings.search_per_minute
    ):
        # Encode before the transaction opens: no connection is held while the model runs.
        # A search without a dense leg (sparse mode, dense weight 0) does not wait for it.
        qvec = service.query_vector(resources, principal.person_id, body)
        # The rest is one service call (app/search/service.py): it picks the read
        # connection (a healthy replica or the primary), resolves access, runs the
        # statement and commits the audit row before the response leaves: no audit row,
        # no results.
        result = service.search(resources, principal, body, qvec=qvec, started=started)
    response.headers["X-Ewall-Read-From"] = "primary" if result.read_from == PRIMARY else "replica"
    return service.to_response(result)


def _one_label(given: str | None, headers: list[str], name: str) -> str | None:
    """The search's label: the body's, the header's, or both when they agree. Two that
    differ (the body and the header, or the header given twice) are refused: the audit row
    kept one without a word, naming another model than the one a gateway reported. An
    empty label (a blank header, ``""`` in the body) names none."""
    labels = {label for raw in headers if raw and (label := _header_label(raw, name))}
    if given:
        labels.add(given)
    if len(labels) > 1:
        raise Unprocessable(
            "conflicting_labels",
            f"{name} names two labels for one search (the body's and the header's, or the "
            "header given twice); give one.",
            field=name,
        )
    return next(iter(labels), given)


def _header_label(raw: str, name: str) -> str:
    """A label from a header as the caller wrote it: HTTP hands header bytes over as
    Latin-1, so UTF-8 ("café") is read back as such; control characters are refused, as in
    the body."""
    try:
        value = raw.encode("latin-1").decode("utf-8").strip()
    except UnicodeError:
        raise Unprocessable("invalid_header", f"{name} is not UTF-8 text.", field=name) from None
    if not storable(value):
        raise Unprocessable(
            "invalid_header", f"{name} must not contain control characters.", field=name
        )
    if len(value) > LABEL_MAX:  # Header(max_length=...) checks the first value given alone
        raise Unprocessable(
            "invalid_header", f"{name} must be at most {LABEL_MAX} characters.", field=name
        )
    try:
        return one_line(value)
    except ValueError:
        raise Unprocessable(
            "invalid_header", f"{name} must be one line of visible characters.", field=name
        ) from None


SynonymText = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=200),
    AfterValidator(no_control),
]


class SynonymIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    term: SynonymText
    synonym: SynonymText


@router.get("/search/synonyms")
def list_synonyms(principal: Admin, conn: ConnDep) -> dict[str, Any]:
    return {"items": [asdict(r) for r in repository.list_synonyms(conn)]}


@router.put("/search/synonyms", status_code=200)
def put_synonym(body: SynonymIn, principal: Admin, conn: ConnDep) -> dict[str, Any]:
    """Takes effect for the next search: ts_rewrite reads the table at query time."""
    term_lexemes, synonym_lexemes = repository.lexeme_counts(conn, body.term, body.synonym)
    if not term_lexemes:
        raise Unprocessable("no_lexemes", "The term has no searchable words.", field="term")
    if not synonym_lexemes:
        raise Unprocessable("no_lexemes", "The synonym has no searchable words.", field="synonym")
    repository.insert_synonym(conn, body.term.lower(), body.synonym.lower(), principal.person_id)
    return {"term": body.term.lower(), "synonym": body.synonym.lower()}


@router.delete("/search/synonyms")
def delete_synonym(body: SynonymIn, principal: Admin, conn: ConnDep) -> dict[str, Any]:
    if not repository.delete_synonym(conn, body.term.lower(), body.synonym.lower()):
        raise NotFound("Synonym", f"{body.term} -> {body.synonym}")
    return {"deleted": True}

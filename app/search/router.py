"""POST /v1/search (lawyer)."""

from __future__ import annotations

import time
from typing import Annotated, Any

from fastapi import APIRouter, Header

from app.deps import Lawyer, ResourcesDep
from app.search.schemas import SearchIn, SearchOut
from app.search.service import embed_query, run_search, to_response

router = APIRouter(prefix="/v1", tags=["search"])


@router.post("/search", response_model=SearchOut)
def search(
    body: SearchIn,
    principal: Lawyer,
    resources: ResourcesDep,
    x_model: Annotated[str | None, Header(max_length=200)] = None,
    x_prompt_version: Annotated[str | None, Header(max_length=200)] = None,
) -> dict[str, Any]:
    started = time.perf_counter()
    if body.model is None and x_model:
        body.model = x_model.strip()
    if body.prompt_version is None and x_prompt_version:
        body.prompt_version = x_prompt_version.strip()
    # Encode before the transaction opens: no connection is held while the model runs.
    qvec = embed_query(resources.require_embedder(), body.query)
    # The search, its access resolution and its audit row share ONE transaction, committed
    # before the response leaves: no audit row, no results.
    with resources.database.transaction() as conn:
        result = run_search(conn, resources, principal, body, qvec=qvec, started=started)
    return to_response(result)

"""Parameters for planning the hybrid statement by hand (EXPLAIN in the plan tests): a
one-word question against the open wall group, both legs on, at the test encoder's
dimension."""

from __future__ import annotations

from typing import Any


def hybrid_explain_params(*, hnsw: bool, **override: Any) -> dict[str, Any]:
    params: dict[str, Any] = {
        "qvec": "[" + ",".join(["0.05"] * 384) + "]",
        "match_tsq": "'octrooi'",
        "headline_tsq": "'octrooi'",
        "rank_lexemes": ["octrooi"],
        "rank_weights": [1.0],
        "rank_idf_weights": [2.0],
        "names": [],
        "typed_tsq": None,
        "wall_groups": ["open"],
        "source_acl_ids": ["public"],
        "policy_version": 1,
        "doc_types": None,
        "sources": None,
        "matter_ids": None,
        "session_matter_id": None,
        "modified_from": None,
        "modified_to": None,
        "use_dense": True,
        "use_sparse": True,
        "dense_weight": 0.5,
        "sparse_weight": 1.0,
        "rrf_k": 60,
        "k": 5,
        "dense_candidates": 50,
        "sparse_candidates": 50,
        "sparse_impact": False,
        "sparse_sum": False,
        "sparse_group_index": True,
        "sparse_gin": True,
        "collapse": True,
        "dense_hnsw": hnsw,
    }
    unknown = set(override) - set(params)
    if unknown:
        raise KeyError(f"not a parameter of the statement: {sorted(unknown)}")
    return {**params, **override}

"""The benchmark's time table names each statement of a search by its SQL block; a marker
that no longer matches its block (the query analysis once began "WITH corpus AS" and then
"WITH plain AS") silently moved its time to "other SQL"."""

from __future__ import annotations

from app.db import sqlfiles
from bench.search_measure import STATEMENT_BLOCKS, statement_marker


def test_each_marker_tells_its_block_from_the_other_parts() -> None:
    blocks = sqlfiles.load_all()
    labels = dict(STATEMENT_BLOCKS)
    for block, label in STATEMENT_BLOCKS:
        marker = statement_marker(block)
        assert len(marker) >= 12, (block, marker)
        assert marker in blocks[block]
        # another part's block holding it would take that part's time
        others = {labels[name] for name, body in blocks.items() if marker in body and name in labels}
        assert others == {label}, (label, marker, others)

"""The chunks' full-text index without GIN's pending list, so ingestion never slows searches.

Revision ID: 20261201_0034
Revises: 20261201_0033
Create Date: 2026-12-01

With ``fastupdate`` on (PostgreSQL's default) new entries of a GIN index go to an unsorted
pending list that EVERY search through the index reads in full, until an inserting backend
or vacuum merges it (up to ``gin_pending_list_limit``, 4 MB). During an ingestion run the
list is always near full, so each sparse search of every user pays for it: the isolation
benchmark measured searches at 2-3x their idle time during a 40-document folder run with
the ingesting work already at the lowest priority (docs/isolation.md, Run 9). Without the
list, the ingesting transaction itself does the index work (in the low-priority job worker)
and a search reads only the index.

Applied to every GIN index on chunks or on its partitions (hash-partitioned layouts), and
their pending lists are merged now.
"""

from collections.abc import Sequence

from alembic import op

revision: str = "20261201_0034"
down_revision: str | None = "20261201_0033"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_SET = r"""
DO $do$
DECLARE
    idx regclass;
BEGIN
    FOR idx IN
        SELECT i.indexrelid::regclass
        FROM pg_index AS i
        JOIN pg_class AS c ON c.oid = i.indexrelid
        JOIN pg_am AS a ON a.oid = c.relam
        WHERE a.amname = 'gin' AND c.relkind = 'i'
          AND i.indrelid IN (SELECT 'chunks'::regclass
                             UNION ALL
                             SELECT inhrelid FROM pg_inherits
                             WHERE inhparent = 'chunks'::regclass)
        ORDER BY 1
    LOOP
        EXECUTE format('ALTER INDEX %s SET (fastupdate = %s)', idx, '{value}');
        IF '{value}' = 'off' THEN
            PERFORM gin_clean_pending_list(idx);
        END IF;
    END LOOP;
END
$do$;
"""


def _run(statement: str) -> None:
    driver = op.get_bind().connection.driver_connection
    if driver is None:
        raise RuntimeError("no driver connection")
    with driver.cursor() as cur:
        cur.execute(statement)


def upgrade() -> None:
    _run(_SET.replace("{value}", "off"))


def downgrade() -> None:
    _run(_SET.replace("{value}", "on"))

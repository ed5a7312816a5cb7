"""Ranking statistics per access key, so a search weighs only what its person may see.

Revision ID: 20261203_0042
Revises: 20261203_0041
Create Date: 2026-12-03

Invariant 12 (non-interference): what a person's search returns is a function of the rows
that person may see and of the query alone. The sparse leg's statistics were global:
``analyze_query`` read ``lexeme_stats.ndoc`` and ``corpus_stats.n_chunks`` (every chunk,
walled and suppressed ones included) for its IDF, its common-word cut, its match budget and
the lexemes it ranks; ``ewall_sparse_document_rank`` read ``corpus_stats``' document count
and mean length for BM25. Documents added behind a wall, full of a lawyer's words, changed
that lawyer's ranking.

The statistics are now kept per access key, the pair (wall_group_id, source_acl_id) that
decides who may see a chunk, over the chunks that are not suppressed (visible to nobody):

- ``search_key_stats``: chunks, documents and document word pieces per key;
- ``search_key_lexeme_stats``: per lexeme and key, the chunks holding the lexeme;
- ``search_key_document_stats``: per document and key, its chunks and word pieces there
  (a document's length as a person sees it; its rows' count per key is the key's document
  count, kept by statement triggers on this table).

Statement-level triggers on ``chunks`` keep the three in the writing transaction for every
insert, delete and update, including re-tagging (a new wall group), a new source ACL and the
``suppressed`` flag. An update that changes none of the counted columns (a re-embed, new
positions, a date) costs a comparison, no counting. The search sums the rows of the
person's allowed wall groups and source ACLs (``sql/search.sql``); the new ranking function
takes those sets too. Chunks of a matter pending re-tag are still counted under their
current key (docs/design.md, known limits).

The global tables stay (the dense strategy's corpus size, the layout advice's row count,
bench); the search no longer reads ``lexeme_stats`` or the document figures of
``corpus_stats``. The ranking function of revision 0033 (eight arguments) stays for older
statement texts that bench compares against.
"""

from collections.abc import Sequence

from alembic import context, op

revision: str = "20261203_0042"
down_revision: str | None = "20261203_0041"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLES = ("search_key_stats", "search_key_lexeme_stats", "search_key_document_stats")

CREATE_TABLES = r"""
CREATE TABLE search_key_stats (
    wall_group_id text NOT NULL,
    source_acl_id text NOT NULL,
    n_chunks bigint NOT NULL DEFAULT 0,
    n_documents bigint NOT NULL DEFAULT 0,
    n_document_tokens numeric NOT NULL DEFAULT 0,
    CONSTRAINT pk_search_key_stats PRIMARY KEY (wall_group_id, source_acl_id)
);

CREATE TABLE search_key_lexeme_stats (
    lexeme text NOT NULL,
    wall_group_id text NOT NULL,
    source_acl_id text NOT NULL,
    n_chunks bigint NOT NULL,
    CONSTRAINT pk_search_key_lexeme_stats PRIMARY KEY (lexeme, wall_group_id, source_acl_id)
);

CREATE TABLE search_key_document_stats (
    document_id bigint NOT NULL,
    wall_group_id text NOT NULL,
    source_acl_id text NOT NULL,
    n_chunks integer NOT NULL,
    n_tokens bigint NOT NULL,
    CONSTRAINT pk_search_key_document_stats
        PRIMARY KEY (document_id, wall_group_id, source_acl_id)
);
"""

# The chunks a statement adds (sg = 1) or takes away (sg = -1) from the statistics: only
# chunks that are not suppressed count. For an update, a row whose counted columns are all
# unchanged is no change (a re-embed updates every chunk and must not recount its lexemes).
SAME = (
    "(o.wall_group_id, o.source_acl_id, o.suppressed, o.document_id, o.token_count, o.body) "
    "IS NOT DISTINCT FROM "
    "(n.wall_group_id, n.source_acl_id, n.suppressed, n.document_id, n.token_count, n.body)"
)
COLUMNS = "wall_group_id, source_acl_id, document_id, token_count, body_tsv"
INSERTED = f"SELECT 1 AS sg, {COLUMNS} FROM new_rows WHERE NOT suppressed"
DELETED = f"SELECT -1 AS sg, {COLUMNS} FROM old_rows WHERE NOT suppressed"
UPDATED = f"""
        SELECT 1 AS sg, {COLUMNS} FROM new_rows AS n
        WHERE NOT n.suppressed
          AND NOT EXISTS (SELECT 1 FROM old_rows AS o WHERE o.chunk_id = n.chunk_id AND {SAME})
        UNION ALL
        SELECT -1 AS sg, {COLUMNS} FROM old_rows AS o
        WHERE NOT o.suppressed
          AND NOT EXISTS (SELECT 1 FROM new_rows AS n WHERE n.chunk_id = o.chunk_id AND {SAME})
"""


def _apply(delta: str) -> str:
    """One statement that moves the three tables by ``delta``; rows in key order, as the
    other statistics triggers, so concurrent writers cannot deadlock."""
    return f"""
    WITH d AS MATERIALIZED ({delta}
    ), keys AS (
        INSERT INTO search_key_stats AS s
            (wall_group_id, source_acl_id, n_chunks, n_document_tokens)
        SELECT wall_group_id, source_acl_id, sum(sg), sum(sg * token_count) FROM d
        GROUP BY wall_group_id, source_acl_id
        HAVING sum(sg) <> 0 OR sum(sg * token_count) <> 0
        ORDER BY wall_group_id, source_acl_id
        ON CONFLICT (wall_group_id, source_acl_id) DO UPDATE
            SET n_chunks = s.n_chunks + excluded.n_chunks,
                n_document_tokens = s.n_document_tokens + excluded.n_document_tokens
    ), lexemes AS (
        INSERT INTO search_key_lexeme_stats AS l (lexeme, wall_group_id, source_acl_id, n_chunks)
        SELECT lex, wall_group_id, source_acl_id, sum(sg)
        FROM d, unnest(tsvector_to_array(body_tsv)) AS lex
        GROUP BY lex, wall_group_id, source_acl_id HAVING sum(sg) <> 0
        ORDER BY lex, wall_group_id, source_acl_id
        ON CONFLICT (lexeme, wall_group_id, source_acl_id) DO UPDATE
            SET n_chunks = l.n_chunks + excluded.n_chunks
    )
    INSERT INTO search_key_document_stats AS s
        (document_id, wall_group_id, source_acl_id, n_chunks, n_tokens)
    SELECT document_id, wall_group_id, source_acl_id, sum(sg), sum(sg * token_count) FROM d
    GROUP BY document_id, wall_group_id, source_acl_id
    HAVING sum(sg) <> 0 OR sum(sg * token_count) <> 0
    ORDER BY document_id, wall_group_id, source_acl_id
    ON CONFLICT (document_id, wall_group_id, source_acl_id) DO UPDATE
        SET n_chunks = s.n_chunks + excluded.n_chunks, n_tokens = s.n_tokens + excluded.n_tokens;
"""


def _remove_empty(delta: str) -> str:
    """Rows a statement emptied leave the tables (a re-tag empties the old group's)."""
    return f"""
    DELETE FROM search_key_document_stats AS s
    USING (SELECT DISTINCT document_id, wall_group_id, source_acl_id
           FROM ({delta}) AS d WHERE sg < 0) AS e
    WHERE s.document_id = e.document_id AND s.wall_group_id = e.wall_group_id
      AND s.source_acl_id = e.source_acl_id AND s.n_chunks <= 0;
    DELETE FROM search_key_lexeme_stats AS l
    USING (SELECT DISTINCT lex, wall_group_id, source_acl_id
           FROM ({delta}) AS d, unnest(tsvector_to_array(body_tsv)) AS lex
           WHERE sg < 0) AS e
    WHERE l.lexeme = e.lex AND l.wall_group_id = e.wall_group_id
      AND l.source_acl_id = e.source_acl_id AND l.n_chunks <= 0;
"""


def _trigger_function(name: str, body: str) -> str:
    return f"""
CREATE FUNCTION {name}() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
{body}
    RETURN NULL;
END
$fn$;
"""


TRIGGERS = (
    _trigger_function("ewall_key_stats_after_insert", _apply(INSERTED))
    + _trigger_function("ewall_key_stats_after_delete", _apply(DELETED) + _remove_empty(DELETED))
    + _trigger_function("ewall_key_stats_after_update", _apply(UPDATED) + _remove_empty(UPDATED))
    + r"""
-- a key's document count: the document rows it holds
CREATE FUNCTION ewall_key_documents_after_insert() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    INSERT INTO search_key_stats AS s (wall_group_id, source_acl_id, n_documents)
    SELECT wall_group_id, source_acl_id, count(*) FROM new_rows
    GROUP BY wall_group_id, source_acl_id ORDER BY wall_group_id, source_acl_id
    ON CONFLICT (wall_group_id, source_acl_id) DO UPDATE
        SET n_documents = s.n_documents + excluded.n_documents;
    RETURN NULL;
END
$fn$;

CREATE FUNCTION ewall_key_documents_after_delete() RETURNS trigger
LANGUAGE plpgsql AS $fn$
BEGIN
    UPDATE search_key_stats AS s SET n_documents = s.n_documents - d.n
    FROM (SELECT wall_group_id, source_acl_id, count(*) AS n FROM old_rows
          GROUP BY wall_group_id, source_acl_id ORDER BY wall_group_id, source_acl_id) AS d
    WHERE s.wall_group_id = d.wall_group_id AND s.source_acl_id = d.source_acl_id;
    RETURN NULL;
END
$fn$;

CREATE TRIGGER chunks_key_stats_insert AFTER INSERT ON chunks
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION ewall_key_stats_after_insert();
CREATE TRIGGER chunks_key_stats_delete AFTER DELETE ON chunks
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT
    EXECUTE FUNCTION ewall_key_stats_after_delete();
CREATE TRIGGER chunks_key_stats_update AFTER UPDATE ON chunks
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION ewall_key_stats_after_update();
CREATE TRIGGER search_key_documents_insert AFTER INSERT ON search_key_document_stats
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT
    EXECUTE FUNCTION ewall_key_documents_after_insert();
CREATE TRIGGER search_key_documents_delete AFTER DELETE ON search_key_document_stats
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT
    EXECUTE FUNCTION ewall_key_documents_after_delete();
"""
)

# The document ranking of revision 0027 with BM25's corpus figures (document count, mean
# length) and each document's length summed over the person's allowed keys only. Document
# frequency is counted in the pool, which holds only chunks the person may see.
RANKING = r"""
CREATE FUNCTION ewall_sparse_document_rank(
    chunk_ids text[], document_ids bigint[], tsvs tsvector[],
    lexemes text[], weights float8[], k1 float8, b float8, n integer,
    wall_groups text[], source_acl_ids text[]
) RETURNS TABLE (chunk_id text, relevance float8)
LANGUAGE sql STABLE PARALLEL SAFE AS $fn$
    WITH visible AS (
        SELECT coalesce(sum(k.n_documents), 0) AS n_docs,
               coalesce(sum(k.n_document_tokens), 0) AS n_tokens
        FROM search_key_stats AS k
        WHERE k.wall_group_id = ANY(wall_groups) AND k.source_acl_id = ANY(source_acl_ids)
    ), corpus AS (
        SELECT greatest(n_docs, 1) AS n_docs,
               greatest(n_tokens / nullif(n_docs, 0), 1) AS avgdl
        FROM visible
    ), q AS (
        SELECT DISTINCT ON (w.lexeme) w.lexeme, w.weight
        FROM unnest(lexemes, weights) AS w(lexeme, weight)
        ORDER BY w.lexeme, w.weight DESC
    ), ctf AS (
        SELECT p.chunk_id, p.document_id, u.lexeme,
               coalesce(array_length(u.positions, 1), 1) AS tf
        FROM unnest(chunk_ids, document_ids, tsvs) AS p(chunk_id, document_id, tsv),
             -- only the query's lexemes, before the unnest (a chunk has ~100 others)
             unnest(ts_filter(setweight(setweight(p.tsv, 'D'), 'A', lexemes), '{a}')) AS u
    ), dtf AS (
        SELECT document_id, lexeme, sum(tf) AS tf FROM ctf GROUP BY document_id, lexeme
    ), ddf AS (
        SELECT lexeme, count(*) AS df FROM dtf GROUP BY lexeme
    ), lengths AS (
        -- a document's length as the person sees it (its chunks under allowed keys)
        SELECT s.document_id, sum(s.n_tokens) AS n_tokens
        FROM search_key_document_stats AS s
        WHERE s.document_id IN (SELECT document_id FROM dtf)
          AND s.wall_group_id = ANY(wall_groups) AND s.source_acl_id = ANY(source_acl_ids)
        GROUP BY s.document_id
    ), docs AS (
        SELECT d.document_id,
               sum(q.weight * ln(1 + (corpus.n_docs - f.df + 0.5) / (f.df + 0.5))
                   * d.tf * (k1 + 1)
                   / (d.tf + k1 * (1 - b + b * coalesce(s.n_tokens, corpus.avgdl)
                                                / corpus.avgdl))) AS score
        FROM dtf AS d
        JOIN q ON q.lexeme = d.lexeme
        JOIN ddf AS f ON f.lexeme = d.lexeme
        LEFT JOIN lengths AS s ON s.document_id = d.document_id
        CROSS JOIN corpus
        GROUP BY d.document_id
    ), chunk_scores AS (
        SELECT c.chunk_id, c.document_id, sum(q.weight * c.tf / (c.tf + 1.2)) AS own
        FROM ctf AS c JOIN q ON q.lexeme = c.lexeme
        GROUP BY c.chunk_id, c.document_id
    )
    SELECT cs.chunk_id,
           docs.score / row_number() OVER (PARTITION BY cs.document_id
                                           ORDER BY cs.own DESC, cs.chunk_id) AS relevance
    FROM chunk_scores AS cs JOIN docs ON docs.document_id = cs.document_id
    ORDER BY relevance DESC, cs.chunk_id
    LIMIT n
$fn$;
"""

# The backfill reads chunks: a migration role that is not a superuser passes the chunks
# policies only with the maintenance setting (migration 20261202_0036). The document rows
# go in first, so their trigger counts each key's documents.
BACKFILL = r"""
SELECT set_config('ewall.writer', 'on', true);
INSERT INTO search_key_stats (wall_group_id, source_acl_id, n_chunks, n_document_tokens)
SELECT wall_group_id, source_acl_id, count(*), sum(token_count) FROM chunks
WHERE NOT suppressed GROUP BY wall_group_id, source_acl_id ORDER BY 1, 2;
INSERT INTO search_key_document_stats
    (document_id, wall_group_id, source_acl_id, n_chunks, n_tokens)
SELECT document_id, wall_group_id, source_acl_id, count(*), sum(token_count) FROM chunks
WHERE NOT suppressed GROUP BY document_id, wall_group_id, source_acl_id ORDER BY 1, 2, 3;
INSERT INTO search_key_lexeme_stats (lexeme, wall_group_id, source_acl_id, n_chunks)
SELECT lex, wall_group_id, source_acl_id, count(*)
FROM chunks, unnest(tsvector_to_array(body_tsv)) AS lex
WHERE NOT suppressed GROUP BY lex, wall_group_id, source_acl_id ORDER BY 1, 2, 3;
"""

DOWNGRADE = r"""
DROP FUNCTION ewall_sparse_document_rank(
    text[], bigint[], tsvector[], text[], float8[], float8, float8, integer, text[], text[]);
DROP TRIGGER chunks_key_stats_insert ON chunks;
DROP TRIGGER chunks_key_stats_delete ON chunks;
DROP TRIGGER chunks_key_stats_update ON chunks;
DROP FUNCTION ewall_key_stats_after_insert();
DROP FUNCTION ewall_key_stats_after_delete();
DROP FUNCTION ewall_key_stats_after_update();
DROP TABLE search_key_document_stats;
DROP FUNCTION ewall_key_documents_after_insert();
DROP FUNCTION ewall_key_documents_after_delete();
DROP TABLE search_key_lexeme_stats;
DROP TABLE search_key_stats;
"""


def _app_role() -> str:
    role = str(context.config.attributes.get("app_role", "ewall_app"))
    if not role.replace("_", "").isalnum() or not role[0].isalpha():
        raise ValueError(f"unsafe app role name {role!r}")
    return role


def _run(statement: str) -> None:
    # Straight to psycopg without parameters, as the other revisions (the DDL holds ":").
    driver = op.get_bind().connection.driver_connection
    if driver is None:
        raise RuntimeError("no driver connection")
    with driver.cursor() as cur:
        cur.execute(statement)


def upgrade() -> None:
    role = _app_role()
    _run(CREATE_TABLES)
    _run(TRIGGERS)
    _run(RANKING)
    _run(BACKFILL)
    for table in TABLES:
        # searches read them; the chunk triggers run as the writing role (the service role,
        # or ewall_writer in writer mode, which holds what the service role holds)
        for grantee in (role, "ewall_writer"):
            _run(f"GRANT SELECT, INSERT, UPDATE, DELETE ON {table} TO {grantee}")


def downgrade() -> None:
    _run(DOWNGRADE)

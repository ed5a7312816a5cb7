-- Who may see a chunk: the one visibility rule (migration 20261203_0043). Every statement
-- that reads chunks on behalf of a person writes
--
--     ewall_chunk_visible(c.wall_group_id, c.source_acl_id, c.matter_id, c.suppressed,
--                         <allowed wall groups>, <allowed source ACLs>,
--                         (SELECT ewall_retag_pending())[, <group index>])
--
-- and tests/foundation/test_layers.py fails on a statement in sql/ that reads chunks without
-- it (or is not on its list of statements that read chunks for no person).
--
-- A chunk is visible when ALL of (docs/architecture.md, "the meaning of a wall"):
--   - its wall group is one the person may see now (the walls, by matter);
--   - its source ACL is one the person's principals may read (the document's own rules);
--   - its matter is not pending re-tag: its chunks may still carry the old group, so the
--     matter is hidden from everyone until the worker has moved them (fail closed);
--   - it is not suppressed (withdrawn case law: visible to no one).
-- NULL never admits: an unknown group, ACL or set gives NULL, which a WHERE drops.
--
-- Plans: ewall_chunk_visible is a LANGUAGE sql function with a single expression, IMMUTABLE,
-- not STRICT, no SET clause, not SECURITY DEFINER, so the planner inlines it: the statement is
-- planned as if the four tests were written in place, each its own clause (index use and
-- estimates as before). The allowed sets are the caller's bound parameters (constants when
-- the statement is planned). The pending matters come from ewall_retag_pending() wrapped in a
-- scalar sub-select: read once per statement (an InitPlan), in the statement's own snapshot.
-- A bare call (without the SELECT) would run once per row; the layer test requires the
-- wrapped form.
--
-- group_index (default true): whether the group test may be served by the btree on
-- wall_group_id. False writes it as (wall_group_id || '') = ANY(...), the same test that no
-- index serves: the HNSW dense leg, whose ordered index scan must stay the planner's only
-- sensible path, and the sparse leg for a large allowed set (a filter after the GIN scan).
-- A constant when planned, so the CASE folds away.

CREATE OR REPLACE FUNCTION ewall_chunk_visible(
    wall_group_id text, source_acl_id text, matter_id text, suppressed boolean,
    allowed_wall_groups text[], allowed_source_acls text[], pending_matters text[],
    group_index boolean DEFAULT true)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
    SELECT (CASE WHEN group_index THEN wall_group_id ELSE wall_group_id || '' END)
               = ANY(allowed_wall_groups)
       AND source_acl_id = ANY(allowed_source_acls)
       AND coalesce(matter_id, '') <> ALL(pending_matters)
       AND NOT suppressed
$fn$;

-- The matters pending re-tag (retag_pending), for the rule's pending_matters.
CREATE OR REPLACE FUNCTION ewall_retag_pending() RETURNS text[]
LANGUAGE sql STABLE PARALLEL SAFE AS $fn$
    SELECT coalesce(array_agg(matter_id ORDER BY matter_id), '{}') FROM retag_pending
$fn$;

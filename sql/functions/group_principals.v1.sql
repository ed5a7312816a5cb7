-- The group principals among a source ACL's principals (migration 20261206_0054).
--
-- A principal is "<source>:user:<id>" or "<source>:group:<id>" (a source name holds no
-- colon). source_acls.deny_groups is generated from deny with this function: a deny that
-- names a group is enforced through the group's members, so a search admits a document
-- only while every group it denies has a membership that ewall holds (source_groups). A
-- group never synced, or forgotten after a failed membership read, makes such a document
-- visible to nobody: a deny must never lapse because its members are unknown. IMMUTABLE
-- (a generated column needs it); it reads nothing but its argument.
CREATE OR REPLACE FUNCTION ewall_group_principals(principals text[])
RETURNS text[]
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $fn$
    SELECT coalesce(array_agg(p ORDER BY p), '{}')
    FROM unnest(principals) AS t(p)
    WHERE split_part(p, ':', 2) = 'group'
$fn$;

-- A resurrect of workflow job `id`: it and every dead letter of its workflow cancelled for a
-- dependency ('dependency_failed') reachable from it by edges, locked in id order.
WITH RECURSIVE r(id) AS (
    SELECT %(id)s::bigint
    UNION
    SELECT d.child FROM r
    JOIN {schema}.deps d ON d.parent = r.id
    JOIN {schema}.dead x ON x.id = d.child AND x.reason = 'dependency_failed'
)
SELECT x.id FROM {schema}.dead x WHERE x.id IN (SELECT id FROM r) ORDER BY x.id FOR UPDATE

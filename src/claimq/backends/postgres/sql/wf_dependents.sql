-- The jobs that wait for `id`: each one's edge policy and the next free position among its
-- dependencies.
SELECT d.child, d.on_failure,
       (SELECT max(e.position) + 1 FROM {schema}.deps e WHERE e.child = d.child) AS next_position
FROM {schema}.deps d WHERE d.parent = %(id)s
ORDER BY d.child

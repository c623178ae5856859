-- Spawn: the jobs that wait for the spawner, each with its edge's policy and the next free
-- position among its dependencies (read after the caller locked the spawner's row and those
-- jobs' held rows: no other write adds edges into them meanwhile).
SELECT e.child, e.on_failure,
       (SELECT coalesce(max(x.position), -1) + 1 FROM claimq_deps x WHERE x.child = e.child)
           AS next_position
FROM claimq_deps e
WHERE e.parent = %(id)s
ORDER BY e.child

-- The jobs that wait for :id (spawn), each with its edge's policy and its next free position.
SELECT e.child, e.on_failure,
       (SELECT coalesce(max(x.position), -1) + 1 FROM claimq_deps x WHERE x.child = e.child)
FROM claimq_deps e
WHERE e.parent = :id
ORDER BY e.child

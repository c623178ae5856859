-- Held jobs among :ids with no unresolved edge left; failed: one of their parents is dead.
SELECT h.id, h.run_if,
       EXISTS (SELECT 1 FROM claimq_deps e JOIN claimq_dead d ON d.id = e.parent
               WHERE e.child = h.id) AS failed
FROM claimq_held h
WHERE h.id IN (SELECT value FROM json_each(:ids)) AND h.waiting <= 0
ORDER BY h.id

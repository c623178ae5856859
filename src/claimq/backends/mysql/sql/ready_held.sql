-- Held children with nothing left to wait for, by id, and whether any of their dependencies is
-- in dead letters (for run_if = 'failed'). A plain read: the caller's decrement (or its
-- resurrect's insert) holds these rows' locks already.
SELECT h.id, h.run_if,
       EXISTS (SELECT 1 FROM claimq_deps e JOIN claimq_dead x ON x.id = e.parent
               WHERE e.child = h.id) AS failed_dependency
FROM claimq_held h
WHERE h.id IN %(ids)s AND h.waiting <= 0
ORDER BY h.id

-- Resurrect: the children of these parents in dead letters for a dependency's failure.
SELECT DISTINCT e.child
FROM claimq_deps e JOIN claimq_dead d ON d.id = e.child
WHERE e.parent IN %(ids)s AND d.reason = 'dependency_failed'
ORDER BY e.child

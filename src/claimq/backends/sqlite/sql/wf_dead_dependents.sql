-- The children of :ids that are dead letters because a dependency failed (resurrect).
SELECT DISTINCT e.child
FROM claimq_deps e JOIN claimq_dead d ON d.id = e.child
WHERE e.parent IN (SELECT value FROM json_each(:ids)) AND d.reason = 'dependency_failed'
ORDER BY e.child

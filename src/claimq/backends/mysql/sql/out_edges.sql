-- The release rule (_workflow.Steps.out_edges): the unresolved edges from parents that have
-- just ended (in the archive or dead letters now; an edge whose parent is in neither is left
-- out), with how each ended, by (parent, child); the edges locked.
SELECT e.parent, e.child, e.on_failure, d.id IS NOT NULL AS dead,
       coalesce(d.task, a.task) AS task, d.reason
FROM claimq_deps e
LEFT JOIN claimq_archive a ON a.id = e.parent
LEFT JOIN claimq_dead d ON d.id = e.parent
WHERE e.parent IN %(ids)s AND NOT e.resolved AND (a.id IS NOT NULL OR d.id IS NOT NULL)
ORDER BY e.parent, e.child
FOR UPDATE

-- The release rule's read: the unresolved edges from jobs that have just ended, with how each
-- parent ended (dead letters, else the archive).
SELECT e.parent, e.child, e.on_failure, d.id IS NOT NULL AS dead,
       coalesce(d.task, a.task) AS task, d.reason
FROM claimq_deps e
LEFT JOIN claimq_dead d ON d.id = e.parent
LEFT JOIN claimq_archive a ON a.id = e.parent
WHERE e.parent IN (SELECT value FROM json_each(:ids)) AND NOT e.resolved
  AND (d.id IS NOT NULL OR a.id IS NOT NULL)
ORDER BY e.parent, e.child

-- Every edge into :ids, with where its parent is: live (jobs or held), dead, else archive (a
-- parent pruned away had finished: it counts as archived).
SELECT e.parent, e.child, e.on_failure,
       CASE WHEN EXISTS (SELECT 1 FROM claimq_jobs j WHERE j.id = e.parent)
                 OR EXISTS (SELECT 1 FROM claimq_held h WHERE h.id = e.parent) THEN 'live'
            WHEN d.id IS NOT NULL THEN 'dead'
            ELSE 'archive' END AS place,
       coalesce(d.task, a.task, '') AS task, d.reason
FROM claimq_deps e
LEFT JOIN claimq_dead d ON d.id = e.parent
LEFT JOIN claimq_archive a ON a.id = e.parent
WHERE e.child IN (SELECT value FROM json_each(:ids))
ORDER BY e.child, e.position

-- Resurrect: every edge into these jobs, with where its parent is now ('live': jobs or held;
-- a parent in no table, pruned, counts as archived), its task and dead-letter reason.
SELECT e.parent, e.child, e.on_failure,
       CASE WHEN j.id IS NOT NULL OR h.id IS NOT NULL THEN 'live'
            WHEN d.id IS NOT NULL THEN 'dead' ELSE 'archive' END AS place,
       coalesce(j.task, h.task, d.task, a.task, '') AS task, d.reason
FROM claimq_deps e
LEFT JOIN claimq_jobs j ON j.id = e.parent
LEFT JOIN claimq_held h ON h.id = e.parent
LEFT JOIN claimq_archive a ON a.id = e.parent
LEFT JOIN claimq_dead d ON d.id = e.parent
WHERE e.child IN %(ids)s
ORDER BY e.child, e.parent

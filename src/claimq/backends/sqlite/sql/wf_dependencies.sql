-- A job's dependencies in the order given, each wherever it is now.
SELECT e.parent AS id,
       coalesce(j.task, h.task, a.task, d.task) AS task,
       CASE WHEN j.id IS NOT NULL THEN j.status WHEN h.id IS NOT NULL THEN 'held'
            WHEN a.id IS NOT NULL THEN 'succeeded' WHEN d.id IS NOT NULL THEN 'dead' END AS status,
       a.result, d.reason
FROM claimq_deps e
LEFT JOIN claimq_jobs j ON j.id = e.parent
LEFT JOIN claimq_held h ON h.id = e.parent
LEFT JOIN claimq_archive a ON a.id = e.parent
LEFT JOIN claimq_dead d ON d.id = e.parent
WHERE e.child = :id
ORDER BY e.position

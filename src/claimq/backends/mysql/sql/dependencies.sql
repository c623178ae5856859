-- A job's dependencies in the order they were given, each where it is now (a pruned one: in
-- no table, its task '' and status 'succeeded', result NULL).
SELECT e.parent AS id,
       coalesce(j.task, h.task, a.task, d.task, '') AS task,
       CASE WHEN j.id IS NOT NULL THEN j.status WHEN h.id IS NOT NULL THEN 'held'
            WHEN d.id IS NOT NULL THEN 'dead' ELSE 'succeeded' END AS status,
       a.result, d.reason
FROM claimq_deps e
LEFT JOIN claimq_jobs j ON j.id = e.parent
LEFT JOIN claimq_held h ON h.id = e.parent
LEFT JOIN claimq_archive a ON a.id = e.parent
LEFT JOIN claimq_dead d ON d.id = e.parent
WHERE e.child = %(id)s
ORDER BY e.position, e.parent

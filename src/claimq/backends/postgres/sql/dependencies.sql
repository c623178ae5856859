-- A job's dependencies in the order they were given, each where it is now.
SELECT d.parent AS id, coalesce(j.task, h.task, a.task, x.task) AS task,
       CASE WHEN j.id IS NOT NULL THEN j.status WHEN h.id IS NOT NULL THEN 'held'
            WHEN a.id IS NOT NULL THEN 'succeeded' WHEN x.id IS NOT NULL THEN 'dead' END
           AS status,
       a.result, x.reason
FROM {schema}.deps d
LEFT JOIN {schema}.jobs j ON j.id = d.parent
LEFT JOIN {schema}.held h ON h.id = d.parent
LEFT JOIN {schema}.archive a ON a.id = d.parent
LEFT JOIN {schema}.dead x ON x.id = d.parent
WHERE d.child = %(id)s
ORDER BY d.position

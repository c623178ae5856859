-- Retention by row count, first step: the newest row of {table} (claimq_archive or
-- claimq_dead, filled in by the backend) past the queue's keep_rows newest (or of every queue
-- but those with a policy of their own); it and every older row go (prune.sql).
SELECT t.finished_at, t.id FROM {table} t
WHERE (%(queue)s IS NULL OR t.queue = %(queue)s)
  AND (%(queue)s IS NOT NULL OR NOT JSON_CONTAINS(%(skip)s, JSON_QUOTE(t.queue)))
ORDER BY t.finished_at DESC, t.id DESC
LIMIT 1 OFFSET %(keep_rows)s

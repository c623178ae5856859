-- One bounded batch of retention for {table} (claimq_archive or claimq_dead, filled in by the
-- backend): the ids of rows of one queue (or of every queue but those with a policy of their
-- own) finished before the age limit, or at or before the `beyond` row (prune_beyond.sql),
-- locked for their DELETE. SKIP LOCKED: never waits on a row. `upto`, the later of the two
-- limits, bounds the index range read. A row of a workflow with a job still live or held is
-- kept (its subqueries are plain reads: they lock nothing).
SELECT t.id, t.workflow_id FROM {table} t
WHERE (%(queue)s IS NULL OR t.queue = %(queue)s)
  AND (%(queue)s IS NOT NULL OR NOT JSON_CONTAINS(%(skip)s, JSON_QUOTE(t.queue)))
  AND t.finished_at <= GREATEST(
        coalesce(TIMESTAMPADD(MICROSECOND, -%(older_than_us)s, {now}), %(beyond_at)s),
        coalesce(%(beyond_at)s, TIMESTAMPADD(MICROSECOND, -%(older_than_us)s, {now})))
  AND (t.finished_at < TIMESTAMPADD(MICROSECOND, -%(older_than_us)s, {now})
       OR (t.finished_at, t.id) <= (%(beyond_at)s, %(beyond_id)s))
  AND NOT {workflow_live}
ORDER BY t.finished_at, t.id
LIMIT %(batch)s
FOR UPDATE SKIP LOCKED

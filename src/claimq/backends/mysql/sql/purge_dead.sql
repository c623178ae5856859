-- A row of a workflow with a job still live or held stays (fan-in results).
DELETE t FROM claimq_dead t
WHERE (%(older_than_us)s IS NULL
       OR t.finished_at < TIMESTAMPADD(MICROSECOND, -%(older_than_us)s, {now}))
  AND (%(queue)s IS NULL OR t.queue = %(queue)s)
  AND (%(task)s IS NULL OR t.task = %(task)s)
  AND NOT {workflow_live}

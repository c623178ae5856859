-- The one rule for "an idempotency key (its row k) is held", shared by the enqueue
-- (key_holder.sql) and the pruner (prune_idempotency.sql): its job is live in one of the
-- statuses %(statuses)s names, or finished less than %(period)s seconds ago (NULL: a finished
-- job holds nothing). k.finished_at is written when the job moves to the archive or the dead
-- letters (migration 012), so the window holds whether or not that row was pruned since.
(EXISTS (SELECT 1 FROM {schema}.jobs j
         WHERE j.id = k.job_id AND j.status = ANY(%(statuses)s::text[]))
 OR coalesce(k.finished_at >= {now} - make_interval(secs => %(period)s::float8), false))

-- The one rule for "an idempotency key (its row k) is held", shared by the enqueue
-- (key_holder.sql) and the pruner (prune_idempotency.sql): its job is live in one of the
-- statuses :statuses names (a JSON array), or finished at or after :since (NULL: a finished
-- job holds nothing). k.finished_at is written when the job moves to the archive or the dead
-- letters (migration 011), so the window holds whether or not that row was pruned since.
(EXISTS (SELECT 1 FROM claimq_jobs j
         WHERE j.id = k.job_id AND j.status IN (SELECT value FROM json_each(:statuses)))
 OR coalesce(k.finished_at >= :since, 0))

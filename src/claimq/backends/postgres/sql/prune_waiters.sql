-- Result waits a process left behind (it died while waiting): an hour after they began, once
-- their job is no longer live.
DELETE FROM {schema}.result_waiters w
WHERE w.created_at < {now} - interval '1 hour'
  AND NOT EXISTS (SELECT 1 FROM {schema}.jobs j WHERE j.id = w.job_id)

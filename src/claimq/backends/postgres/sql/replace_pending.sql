-- Debounce: the pending job holding a key takes the new enqueue's payload and run_at.
UPDATE {schema}.jobs
SET payload = %(payload)s::jsonb,
    run_at = coalesce(%(run_at)s::timestamptz, {now} + make_interval(secs => %(delay)s)),
    updated_at = {now}
WHERE id = %(id)s AND status = 'pending'
RETURNING id

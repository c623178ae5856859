-- A waiter (one per App) registers the jobs it waits for: their archive or dead-letter insert
-- then notifies {schema}_finished (migration 005's trigger).
INSERT INTO {schema}.result_waiters (job_id, waiter, created_at)
SELECT id, %(waiter)s::uuid, {now} FROM unnest(%(ids)s::bigint[]) AS id
ON CONFLICT DO NOTHING

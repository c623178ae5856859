-- Takes the locked candidates. Each job's token is the claim's random part and its id. With
-- start, the job goes straight to processing. By PRIMARY, whose records the claim already holds
-- (through the in-flight index it would lock index records before rows: deadlocks with a
-- debounce or another write that holds the row).
UPDATE claimq_jobs FORCE INDEX (PRIMARY)
SET status = IF(%(start)s, 'processing', 'fetched'),
    attempts = attempts + IF(%(start)s, 1, 0),
    started_at = IF(%(start)s, {now}, NULL),
    heartbeat_at = IF(%(start)s, {now}, NULL),
    worker_id = %(worker_id)s,
    claim_token = CONCAT(%(batch)s, '.', id),
    lease_until = TIMESTAMPADD(MICROSECOND, ROUND(1e6 * coalesce(%(lease)s, (
        SELECT q.lease_seconds FROM claimq_queues q WHERE q.name = claimq_jobs.queue))), {now}),
    updated_at = {now}
WHERE id IN %(ids)s AND status = 'pending'

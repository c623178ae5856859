-- Expired leases: back to pending while attempts remain (a fetched job never started, so it
-- has used none), else to dead letters (claimq.job.expired_lease_reason, set-based here).
-- SKIP LOCKED lets every worker run this at once.
WITH expired AS (
    SELECT j.id,
           (j.cancel_requested OR (j.status = 'processing' AND j.attempts >= j.max_attempts))
               AS bury,
           jsonb_build_object('attempt', j.attempts, 'at', {now}, 'worker', j.worker_id,
                              'error', 'LeaseExpired',
                              'message', 'lease expired while ' || j.status) AS error,
           CASE WHEN j.cancel_requested THEN 'cancelled' ELSE 'lease_expired' END AS reason
    FROM {schema}.jobs j
    WHERE j.status IN ('fetched', 'processing') AND j.lease_until < {now}
    ORDER BY j.lease_until
    LIMIT %(limit)s
    FOR UPDATE SKIP LOCKED
), gone AS (
    DELETE FROM {schema}.jobs j USING expired e
    WHERE j.id = e.id AND e.bury
    RETURNING j.*, e.error AS new_error, e.reason AS new_reason
), buried AS (
    INSERT INTO {schema}.dead ({dead_columns}, finished_at, reason, errors)
    SELECT {dead_columns}, {now}, new_reason, errors || jsonb_build_array(new_error)
    FROM gone
    RETURNING id
), requeued AS (
    UPDATE {schema}.jobs j
    SET status = 'pending',
        worker_id = NULL,
        claim_token = NULL,
        lease_until = NULL,
        heartbeat_at = NULL,
        updated_at = {now},
        errors = j.errors || jsonb_build_array(e.error)
    FROM expired e
    WHERE j.id = e.id AND NOT e.bury
    RETURNING j.id
)
SELECT id, true AS dead FROM buried
UNION ALL
SELECT id, false FROM requeued

-- Hand jobs back without counting the attempt against them (shutdown, pause). A job whose
-- cancel was requested goes to dead letters instead of back to pending.
WITH owned AS (
    SELECT j.id, j.cancel_requested
    FROM {schema}.jobs j
    JOIN unnest(%(ids)s::bigint[], %(tokens)s::uuid[]) AS o(id, token)
      ON j.id = o.id AND j.claim_token = o.token
    WHERE j.status IN ('fetched', 'processing')
    FOR UPDATE OF j
), gone AS (
    DELETE FROM {schema}.jobs j USING owned o
    WHERE j.id = o.id AND o.cancel_requested
    RETURNING j.*
), buried AS (
    INSERT INTO {schema}.dead ({dead_columns}, finished_at, reason, errors)
    SELECT {dead_columns}, {now}, 'cancelled', errors
    FROM gone
    RETURNING id
), released AS (
    UPDATE {schema}.jobs j
    SET status = 'pending',
        attempts = CASE WHEN j.status = 'processing' THEN greatest(j.attempts - 1, 0)
                        ELSE j.attempts END,
        run_at = CASE WHEN %(delay)s > 0 THEN {now} + make_interval(secs => %(delay)s)
                      ELSE j.run_at END,
        worker_id = NULL,
        claim_token = NULL,
        lease_until = NULL,
        heartbeat_at = NULL,
        started_at = NULL,
        updated_at = {now}
    FROM owned o
    WHERE j.id = o.id AND NOT o.cancel_requested
    RETURNING j.id
)
SELECT id FROM buried UNION ALL SELECT id FROM released

-- The claim of the flow statements (claim_flow.sql, claim_keyed.sql): the `chosen` jobs (id,
-- lease_seconds) still pending and not held by another transaction are taken ({claim_set}).
locked AS (
    -- jobs another transaction holds (a cancel, an operator's) are left for the next claim.
    -- A job changed since the statement's snapshot is checked again on its newest version
    -- (READ COMMITTED): still pending and still due (a debounce that moved its run_at later
    -- while the statement ran leaves it where it now belongs).
    SELECT j.id FROM {schema}.jobs j
    WHERE j.id = ANY(ARRAY(SELECT id FROM chosen)) AND j.status = 'pending'
      AND j.run_at <= {now}
    FOR UPDATE SKIP LOCKED
), claimed AS (
    UPDATE {schema}.jobs j
    {claim_set}
    FROM chosen c
    WHERE j.id IN (SELECT id FROM locked) AND j.id = c.id
    RETURNING j.id, j.queue, j.task, j.payload, j.tags, j.idempotency_key, j.priority,
              j.attempts, j.max_attempts, j.claim_token::text AS claim_token, j.lease_until,
              j.updated_at, j.run_at, j.created_at, nullif(j.errors, '[]') AS errors,
              j.timeout_seconds, j.retry
)

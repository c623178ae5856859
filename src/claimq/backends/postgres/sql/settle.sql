-- One statement, one commit per batch: the outcomes' completions (archived, each guarded by its
-- token and status) and the next claim (SKIP LOCKED, sized to the free slots). Either part may
-- be empty: `complete` passes limit 0, `claim` passes no completions.
WITH {settle_done},
open_queues AS (
    SELECT q.name, q.lease_seconds,
           {free_slots} AS free
    FROM {schema}.queues q
    WHERE q.active AND NOT q.paused
      AND (%(queues)s::text[] IS NULL OR q.name = ANY(%(queues)s::text[]))
      -- a limited queue only when the previous statement holds its row (lock_limited_queues)
      AND (q.max_workers IS NULL OR q.name = ANY(%(limited)s::text[]))
      -- flow-controlled queues are claim_flow.sql's
      AND NOT q.flow
), candidates AS (
    SELECT c.id, c.priority, c.run_at, oq.lease_seconds
    FROM open_queues oq
    CROSS JOIN LATERAL (
        SELECT j.id, j.priority, j.run_at
        FROM {schema}.jobs j
        WHERE j.queue = oq.name AND j.status = 'pending' AND j.run_at <= {now}
          -- tasks the claimer cannot run (NULL: none), passed over for another worker
          AND (%(skip)s::text[] IS NULL OR j.task <> ALL(%(skip)s::text[]))
        ORDER BY j.priority DESC, j.run_at, j.id
        LIMIT least(oq.free, %(limit)s)
        FOR UPDATE SKIP LOCKED
    ) c
    ORDER BY c.priority DESC, c.run_at, c.id
    LIMIT %(limit)s
),
claimed AS (
    -- With start, the job goes straight to processing (a worker that claims only for free slots
    -- starts every job at once, so the separate start round trip buys nothing).
    UPDATE {schema}.jobs j
    {claim_set}
    FROM candidates c
    -- As above: the generic plan guesses the claim's LIMIT, and with many pending jobs would
    -- hash the whole table to join a few rows; this keeps it to primary-key lookups.
    WHERE j.id = ANY(ARRAY(SELECT id FROM candidates)) AND j.id = c.id
    -- Only what the caller does not know already: status and worker are its own, started_at
    -- and heartbeat_at equal updated_at (the statement's time) when started. Fewer timestamps
    -- to parse, and no history to decode for a first attempt (NULL for an empty one).
    RETURNING j.id, j.queue, j.task, j.payload, j.tags, j.idempotency_key, j.priority,
              j.attempts, j.max_attempts, j.claim_token::text AS claim_token, j.lease_until,
              j.updated_at, j.run_at, j.created_at, nullif(j.errors, '[]') AS errors,
              j.timeout_seconds, j.retry
)
{settle_answer}

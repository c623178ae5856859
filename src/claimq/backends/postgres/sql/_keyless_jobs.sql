-- Reading on without a key (claim_flow.sql, claim_keyed.sql), for the queues in `deep_queues`
-- (name, need: the most jobs the claim can take of one queue): `keyless_jobs`, their due jobs
-- without a concurrency key or a sequence key that the claim may take ({claimable}), in claim
-- order, as many as the claim's first rows hold.
keyless_jobs AS (
    SELECT s.*
    FROM deep_queues d
    CROSS JOIN LATERAL (
        SELECT j.id, j.queue, j.task, j.priority, j.run_at, j.concurrency_key,
               j.concurrency_limit, j.rate_key
        FROM {schema}.jobs j
        WHERE j.queue = d.name AND j.status = 'pending' AND j.sequence_key IS NULL
          AND j.concurrency_key IS NULL AND j.run_at <= {now}
          AND {claimable}
        ORDER BY j.priority DESC, j.run_at, j.id
        LIMIT d.need * 4 + 16
    ) s
)

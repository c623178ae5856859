-- Reading on without a key (claim_flow.sql, claim_keyed.sql), for the queues in `deep_queues`
-- (name, need: the most jobs the claim can take of one queue): `keyless_jobs`, their due jobs
-- without a concurrency key or a sequence key that the claim may take ({read_on}), in claim
-- order, as many as the claim's first rows hold.
keyless_jobs AS (
    SELECT s.*
    FROM deep_queues d
    CROSS JOIN LATERAL (
        {read_on}
          AND j.queue = d.name AND j.concurrency_key IS NULL
        ORDER BY j.priority DESC, j.run_at, j.id
        LIMIT d.need * 4 + 16
    ) s
)

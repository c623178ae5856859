-- Reading on by key (claim_flow.sql, claim_keyed.sql), for the queues in `deep_queues` (name,
-- need: the most jobs the claim can take of one queue), with `busy` (each key's jobs in
-- flight): `keys`, a skip scan over the concurrency keys of their pending jobs that are not
-- sequence jobs (jobs_keyed_claimable: one index probe per key, however many jobs each has),
-- and `key_jobs`, of each key with room its first due jobs in claim order that the claim may
-- take ({read_on}: with `shut` and `paused`), no more than the claim can take of it.
keys AS (
    SELECT d.name AS queue, d.need,
           (SELECT min(j.concurrency_key) FROM {schema}.jobs j
            WHERE j.queue = d.name AND j.status = 'pending' AND j.sequence_key IS NULL
              AND j.concurrency_key IS NOT NULL) AS key
    FROM deep_queues d
    UNION ALL
    SELECT k.queue, k.need,
           (SELECT min(j.concurrency_key) FROM {schema}.jobs j
            WHERE j.queue = k.queue AND j.status = 'pending' AND j.sequence_key IS NULL
              AND j.concurrency_key > k.key)
    FROM keys k
    WHERE k.key IS NOT NULL
), key_jobs AS (
    SELECT s.*
    FROM keys k
    CROSS JOIN LATERAL (
        {read_on}
          AND j.queue = k.queue AND j.concurrency_key = k.key
        ORDER BY j.priority DESC, j.run_at, j.id
        LIMIT k.need
    ) s
    WHERE k.key IS NOT NULL
      AND coalesce((SELECT b.n FROM busy b WHERE b.queue = k.queue AND b.concurrency_key = k.key),
                   0) < s.concurrency_limit
)

-- claim_flow.sql for flow queues that use concurrency keys and nothing else of flow control (no
-- rate limit of the queue or of its keys, no aging, no throttle of the queue, no breaker, no
-- sequence jobs: lock_limited_queues.sql's `keys_only`, read under the same row locks). Half the
-- server time of claim_flow.sql, whose other parts then all come out empty. Its rows are
-- settle.sql's; like claim_flow.sql it first completes the batch's finished jobs.
-- A job with a sequence key enqueued since the check is left for the next claim (which takes
-- claim_flow.sql), and a rate key throttled by a handler still holds its jobs back.
WITH {settle_done},
fq AS (
    SELECT q.name, q.lease_seconds,
           {free_slots} AS free
    FROM {schema}.queues q
    WHERE q.name = ANY(%(flow)s::text[]) AND q.active AND NOT q.paused
), busy AS (
    -- jobs in flight per key, less those this statement completes
    SELECT r.queue, r.concurrency_key, count(*) AS n
    FROM {schema}.jobs r
    WHERE r.queue = ANY(%(flow)s::text[]) AND r.status IN ('fetched', 'processing')
      AND r.concurrency_key IS NOT NULL
      AND NOT EXISTS (SELECT 1 FROM done d WHERE d.id = r.id)
    GROUP BY r.queue, r.concurrency_key
), scan AS (
    -- due jobs in claim order, skipping keys already at their limit; a few more than the claim
    -- can take, for keys that have room for fewer jobs than they have waiting
    SELECT s.*, fq.free, fq.lease_seconds
    FROM fq
    CROSS JOIN LATERAL (
        SELECT j.id, j.queue, j.priority, j.run_at, j.concurrency_key, j.concurrency_limit
        FROM {schema}.jobs j
        WHERE j.queue = fq.name AND j.status = 'pending' AND j.run_at <= {now}
          AND j.sequence_key IS NULL
          AND (j.concurrency_key IS NULL
               OR NOT EXISTS (SELECT 1 FROM busy b
                              WHERE b.queue = fq.name AND b.concurrency_key = j.concurrency_key
                                AND b.n >= j.concurrency_limit))
          AND (j.rate_key IS NULL
               OR NOT EXISTS (SELECT 1 FROM {schema}.rate_keys k
                              WHERE k.queue = fq.name AND k.key = j.rate_key
                                AND k.throttled_until > {now}))
        ORDER BY j.priority DESC, j.run_at, j.id
        LIMIT least(fq.free, %(limit)s) * 4 + 16
    ) s
    WHERE fq.free > 0
), room AS (
    -- no more of one key than it has room for
    SELECT r.* FROM (
        SELECT s.*, row_number() OVER (PARTITION BY s.queue, s.concurrency_key
                                       ORDER BY s.priority DESC, s.run_at, s.id) AS nth_of_key
        FROM scan s
    ) r
    LEFT JOIN busy b ON b.queue = r.queue AND b.concurrency_key = r.concurrency_key
    WHERE r.concurrency_key IS NULL OR coalesce(b.n, 0) + r.nth_of_key <= r.concurrency_limit
), chosen AS (
    -- no more of a queue than its free slots
    SELECT c.id, c.queue, c.lease_seconds FROM (
        SELECT r.*, row_number() OVER (PARTITION BY r.queue
                                       ORDER BY r.priority DESC, r.run_at, r.id) AS nth_of_queue
        FROM room r
    ) c
    WHERE c.nth_of_queue <= c.free
    ORDER BY c.priority DESC, c.run_at, c.id
    LIMIT %(limit)s
), {claim_chosen}
{settle_answer}

-- claim_flow.sql for flow queues that use concurrency keys and nothing else of flow control (no
-- rate limit of the queue or of its keys, no aging, no throttle of the queue, no breaker, no
-- sequence jobs: lock_limited_queues.sql's `keys_only`, read under the same row locks). Half the
-- server time of claim_flow.sql, whose other parts then all come out empty. Its rows are
-- settle.sql's; like claim_flow.sql it first completes the batch's finished jobs.
-- A job with a sequence key enqueued since the check is left for the next claim (which takes
-- claim_flow.sql), and a rate key throttled by a handler still holds its jobs back.
WITH RECURSIVE {settle_done},
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
), capped AS (
    -- the first rows of each queue's claim order, of any kind: a bounded read (cap rows)
    SELECT s.*, fq.free, fq.lease_seconds
    FROM fq
    CROSS JOIN LATERAL (
        SELECT j.id, j.queue, j.priority, j.run_at, j.concurrency_key, j.concurrency_limit,
               j.sequence_key, j.rate_key
        FROM {schema}.jobs j
        WHERE j.queue = fq.name AND j.status = 'pending' AND j.run_at <= {now}
        ORDER BY j.priority DESC, j.run_at, j.id
        LIMIT least(fq.free, %(limit)s) * 4 + 16
    ) s
    WHERE fq.free > 0
), eligible AS (
    -- of those, the ones the claim may take: no sequence job, no key already at its limit, no
    -- rate key throttled
    SELECT c.* FROM capped c
    WHERE c.sequence_key IS NULL
      AND (c.concurrency_key IS NULL
           OR NOT EXISTS (SELECT 1 FROM busy b
                          WHERE b.queue = c.queue AND b.concurrency_key = c.concurrency_key
                            AND b.n >= c.concurrency_limit))
      AND (c.rate_key IS NULL
           OR NOT EXISTS (SELECT 1 FROM {schema}.rate_keys k
                          WHERE k.queue = c.queue AND k.key = c.rate_key
                            AND k.throttled_until > {now}))
), deep_queues AS (
    -- queues whose first rows (all of cap, so more may follow) give the claim fewer jobs than
    -- it can take, counting each key's room: their claim reads on by key (deep). Otherwise
    -- those rows hold the claim's answer: they come first in claim order.
    SELECT fq.name, fq.free, fq.lease_seconds, least(fq.free, %(limit)s) AS need
    FROM fq
    WHERE fq.free > 0
      AND (SELECT count(*) FROM capped c WHERE c.queue = fq.name)
          >= least(fq.free, %(limit)s) * 4 + 16
      AND (SELECT count(*) FROM (
               SELECT e.concurrency_key, e.concurrency_limit,
                      row_number() OVER (PARTITION BY e.concurrency_key
                                         ORDER BY e.priority DESC, e.run_at, e.id) AS nth
               FROM eligible e WHERE e.queue = fq.name) e
           LEFT JOIN busy b ON b.queue = fq.name AND b.concurrency_key = e.concurrency_key
           WHERE e.concurrency_key IS NULL OR coalesce(b.n, 0) + e.nth <= e.concurrency_limit)
          < least(fq.free, %(limit)s)
), shut AS (
    -- {read_on}'s: a keys_only queue has no circuit breaker; its rate keys have no rate
    -- limit, so only a throttled one is paused
    SELECT NULL::text AS queue, NULL::text AS task WHERE false
), paused AS (
    SELECT k.queue, k.key FROM {schema}.rate_keys k
    WHERE k.queue = ANY(%(flow)s::text[]) AND k.throttled_until > {now}
), {key_jobs}, {keyless_jobs}, deep AS (
    -- per key with room, its first jobs (key_jobs); the jobs without a key, as many as the
    -- first rows hold (keyless_jobs)
    SELECT * FROM key_jobs
    UNION ALL
    SELECT * FROM keyless_jobs
), scan AS (
    -- due jobs in claim order, skipping keys already at their limit; a few more than the claim
    -- can take, for keys that have room for fewer jobs than they have waiting: the first rows
    -- when they hold the claim's answer, else deep's, by key.
    SELECT e.id, e.queue, e.priority, e.run_at, e.concurrency_key, e.concurrency_limit,
           e.free, e.lease_seconds
    FROM eligible e
    WHERE NOT EXISTS (SELECT 1 FROM deep_queues d WHERE d.name = e.queue)
    UNION ALL
    SELECT s.id, s.queue, s.priority, s.run_at, s.concurrency_key, s.concurrency_limit,
           d.free, d.lease_seconds
    FROM deep s JOIN deep_queues d ON d.name = s.queue
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

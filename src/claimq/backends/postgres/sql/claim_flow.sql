-- The claim of flow-controlled queues (a rate limit, or jobs with a concurrency key), run only
-- for those queues and only while this transaction holds their rows (lock_limited_queues.sql):
-- their claimers take turns, so every count below includes every earlier claim.
-- A queue hands out at most its free slots (max_workers), at most the tokens its GCRA bucket
-- holds, and no job whose concurrency key already has concurrency_limit jobs in flight (nor
-- more of one key in this claim than the key has room for). With priority aging, a job's
-- priority counts one more for every aging_step seconds it has been due, at most aging_cap
-- more. A throttled queue hands out nothing until its throttle has passed. Of the jobs with a
-- sequence key, only each sequence's head may be claimed (heads). A task whose circuit breaker
-- is open hands out nothing, one cooled down hands out one job, its probe (gates). A job with
-- a rate key takes a token of its key's own bucket (key_rate_*; none while the key is
-- throttled). Like
-- settle.sql it
-- first completes the batch's finished jobs; its rows are settle.sql's.
WITH RECURSIVE {settle_done},
fq AS (
    SELECT q.name, q.lease_seconds, q.aging_step, q.aging_cap, q.key_rate_count,
           q.key_rate_period / q.key_rate_count AS key_emission,
           coalesce(q.key_rate_burst, q.key_rate_count) AS key_burst,
           q.rate_count, q.rate_period / q.rate_count AS emission,
           greatest(coalesce(q.rate_tat, {now}), {now}) AS tat, q.throttled_until,
           CASE WHEN q.throttled_until > {now} THEN 0 ELSE least(
               {free_slots},
               CASE WHEN q.rate_count IS NULL THEN %(limit)s
                    -- tokens in the bucket: the burst, less what the arrival time is ahead
                    ELSE greatest(floor(extract(epoch FROM {now} - greatest(
                                            coalesce(q.rate_tat, {now}), {now}))
                                        / (q.rate_period / q.rate_count) + 1e-6)::int
                                  + coalesce(q.rate_burst, q.rate_count), 0)
               END) END AS free
    FROM {schema}.queues q
    WHERE q.name = ANY(%(flow)s::text[]) AND q.active AND NOT q.paused
), busy AS (
    SELECT r.queue, r.concurrency_key,
           count(*) - (SELECT count(*) FROM done d WHERE d.queue = r.queue
                                                     AND d.concurrency_key = r.concurrency_key)
           AS n
    FROM {schema}.jobs r
    WHERE r.queue = ANY(%(flow)s::text[]) AND r.status IN ('fetched', 'processing')
      AND r.concurrency_key IS NOT NULL
    GROUP BY r.queue, r.concurrency_key
), gates AS (
    -- The flow queues' circuit breakers that are not simply closed: 'shut' (open and cooling
    -- down, or half_open while its probe runs), 'probe' (cooled down, or its probe went back
    -- to pending: one job may be claimed), 'closed' (half_open, and its probe finished
    -- without a failure, which would have opened it again: it closes), 'reopen' (half_open,
    -- its probe dead-lettered with no failure written: the reaper buried it, a cancel; it
    -- opens again, shut).
    SELECT b.queue, b.task, b.state,
           CASE WHEN b.state = 'open' AND b.open_until > {now} THEN 'shut'
                WHEN b.state = 'open' THEN 'probe'
                WHEN p.status IS NULL
                     AND EXISTS (SELECT 1 FROM {schema}.dead d WHERE d.id = b.probe_id)
                     THEN 'reopen'
                WHEN p.status IS NULL THEN 'closed'
                WHEN p.status = 'pending' THEN 'probe'
                ELSE 'shut' END AS gate
    FROM {schema}.breakers b
    LEFT JOIN {schema}.jobs p ON p.id = b.probe_id
    WHERE b.queue = ANY(%(flow)s::text[]) AND b.state <> 'closed'
), key_rates AS (
    -- the rate keys of the flow queues whose bucket is not full or that are throttled (two
    -- index ranges: the keys used lately): the tokens their buckets hold now (none while
    -- throttled); any other key has a full bucket (key_burst)
    SELECT k.queue, k.key, greatest(coalesce(k.tat, {now}), {now}) AS tat,
           CASE WHEN k.throttled_until > {now} THEN 0
                WHEN fq.key_rate_count IS NULL THEN %(limit)s
                ELSE greatest(floor(extract(epoch FROM {now} - greatest(coalesce(k.tat, {now}),
                                                                       {now}))
                                    / fq.key_emission + 1e-6)::int + fq.key_burst, 0)
           END AS tokens
    FROM {schema}.rate_keys k JOIN fq ON fq.name = k.queue
    WHERE k.tat > {now} OR k.throttled_until > {now}
), sequences AS (
    -- a skip scan over the sequence keys of the flow queues' live jobs (jobs_sequence): one
    -- index probe per key, however many jobs each has (a key without pending jobs has no head)
    SELECT fq.name AS queue,
           (SELECT min(k.sequence_key) FROM {schema}.jobs k
            WHERE k.queue = fq.name AND k.sequence_key IS NOT NULL) AS sequence_key
    FROM fq
    WHERE fq.free > 0
    UNION ALL
    SELECT s.queue,
           (SELECT min(k.sequence_key) FROM {schema}.jobs k
            WHERE k.queue = s.queue AND k.sequence_key > s.sequence_key)
    FROM sequences s
    WHERE s.sequence_key IS NOT NULL
), heads AS (
    -- Ordered sequences: per sequence key with pending jobs, its blocker is its first live job
    -- in id order that is not a failed one of on_failure="skip" waiting for its retry. While
    -- the blocker runs, none; else the first due job up to the blocker (a skipped job comes
    -- first once its retry is due).
    SELECT h.id
    FROM fq
    JOIN sequences s ON s.queue = fq.name AND s.sequence_key IS NOT NULL
    LEFT JOIN LATERAL (
        SELECT b.id, b.status FROM {schema}.jobs b
        WHERE b.queue = fq.name AND b.sequence_key = s.sequence_key
          AND (b.status <> 'pending' OR b.sequence_wait OR b.errors = '[]'::jsonb)
        ORDER BY b.id LIMIT 1) blocker ON true
    CROSS JOIN LATERAL (
        SELECT c.id FROM {schema}.jobs c
        WHERE c.queue = fq.name AND c.sequence_key = s.sequence_key AND c.status = 'pending'
          AND c.run_at <= {now} AND c.id <= coalesce(blocker.id, c.id)
        ORDER BY c.id LIMIT 1) h
    WHERE fq.free > 0 AND coalesce(blocker.status, 'pending') = 'pending'
), capped AS (
    -- the first rows of each queue's claim order, of any kind: a bounded read (cap rows)
    SELECT c.*
    FROM fq
    CROSS JOIN LATERAL (
        SELECT j.id, j.queue, j.task, j.priority, j.run_at, j.concurrency_key,
               j.concurrency_limit, j.rate_key, j.sequence_key
        FROM {schema}.jobs j
        WHERE j.queue = fq.name AND j.status = 'pending' AND j.run_at <= {now}
        ORDER BY j.priority DESC, j.run_at, j.id
        LIMIT least(fq.free, %(limit)s) * 4 + 16
    ) c
    WHERE fq.free > 0
), eligible AS (
    -- of those, the ones the claim may take (the same room checks as scan's)
    SELECT c.*,
           CASE WHEN c.rate_key IS NULL THEN NULL
                ELSE coalesce((SELECT k.tokens FROM key_rates k WHERE k.queue = c.queue
                                                                AND k.key = c.rate_key),
                              fq.key_burst, %(limit)s) END AS key_tokens,
           (SELECT g.gate FROM gates g WHERE g.queue = c.queue AND g.task = c.task) AS gate
    FROM capped c JOIN fq ON fq.name = c.queue
    WHERE c.sequence_key IS NULL
      AND NOT EXISTS (SELECT 1 FROM gates g WHERE g.queue = c.queue AND g.task = c.task
                                             AND g.gate IN ('shut', 'reopen'))
      AND (c.rate_key IS NULL
           OR coalesce((SELECT k.tokens FROM key_rates k WHERE k.queue = c.queue
                                                         AND k.key = c.rate_key),
                       fq.key_burst, 1) > 0)
      AND (c.concurrency_key IS NULL
           OR coalesce((SELECT b.n FROM busy b WHERE b.queue = c.queue
                                                 AND b.concurrency_key = c.concurrency_key),
                       0) < c.concurrency_limit)
), deep_queues AS (
    -- queues whose first rows (all of cap, so more may follow) give the claim fewer jobs than
    -- it can take, counting each key's, task probe's and rate key's room: their claim reads on
    -- by key (deep). Otherwise those rows hold the claim's answer: they come first in claim
    -- order (aging's levels and the sequence heads are read apart, below).
    SELECT fq.name, least(fq.free, %(limit)s) AS need
    FROM fq
    WHERE fq.free > 0
      AND (SELECT count(*) FROM capped c WHERE c.queue = fq.name)
          >= least(fq.free, %(limit)s) * 4 + 16
      AND (SELECT count(*) FROM (
               SELECT e.*,
                      row_number() OVER (PARTITION BY e.concurrency_key
                                         ORDER BY e.priority DESC, e.run_at, e.id) AS nth_of_key,
                      row_number() OVER (PARTITION BY e.task
                                         ORDER BY e.priority DESC, e.run_at, e.id) AS nth_of_task,
                      row_number() OVER (PARTITION BY e.rate_key
                                         ORDER BY e.priority DESC, e.run_at, e.id)
                          AS nth_of_rate_key
               FROM eligible e WHERE e.queue = fq.name) e
           LEFT JOIN busy b ON b.queue = fq.name AND b.concurrency_key = e.concurrency_key
           WHERE (e.concurrency_key IS NULL
                  OR coalesce(b.n, 0) + e.nth_of_key <= e.concurrency_limit)
             AND (e.gate IS DISTINCT FROM 'probe' OR e.nth_of_task = 1)
             AND (e.rate_key IS NULL OR e.nth_of_rate_key <= e.key_tokens))
          < least(fq.free, %(limit)s)
), shut AS (
    -- the tasks whose breaker holds them back, and the rate keys without a token ({read_on})
    SELECT g.queue, g.task FROM gates g WHERE g.gate IN ('shut', 'reopen')
), paused AS (
    SELECT k.queue, k.key FROM key_rates k WHERE k.tokens <= 0
), {key_jobs}, {keyless_jobs}, deep AS (
    -- per key with room, its first jobs (key_jobs); the jobs without a key, as many as the
    -- first rows hold (keyless_jobs)
    SELECT * FROM key_jobs
    UNION ALL
    SELECT * FROM keyless_jobs
), scan AS (
    -- due jobs in claim order, skipping keys already at their limit; a few more than the claim
    -- can take, for keys that have room for fewer jobs than they have waiting (the first rows,
    -- or deep's by key). With aging, also the oldest of each priority level an aged job could
    -- reach from (a few index probes); and the sequences' heads.
    SELECT DISTINCT ON (s.id) s.*, fq.free, fq.lease_seconds,
           CASE WHEN s.rate_key IS NULL THEN NULL
                ELSE coalesce((SELECT k.tokens FROM key_rates k WHERE k.queue = s.queue
                                                                AND k.key = s.rate_key),
                              fq.key_burst, %(limit)s) END AS key_tokens,
           (SELECT g.gate FROM gates g WHERE g.queue = s.queue AND g.task = s.task) AS gate,
           s.priority + CASE WHEN fq.aging_step IS NULL THEN 0
                             ELSE least(fq.aging_cap, floor(extract(epoch FROM {now} - s.run_at)
                                                            / fq.aging_step)::int)
                        END AS claim_rank
    FROM fq
    CROSS JOIN LATERAL (
        (SELECT e.id, e.queue, e.task, e.priority, e.run_at, e.concurrency_key,
                e.concurrency_limit, e.rate_key
         FROM eligible e
         WHERE e.queue = fq.name
           AND NOT EXISTS (SELECT 1 FROM deep_queues d WHERE d.name = fq.name))
        UNION ALL
        (SELECT d.id, d.queue, d.task, d.priority, d.run_at, d.concurrency_key,
                d.concurrency_limit, d.rate_key
         FROM deep d
         WHERE d.queue = fq.name)
        UNION ALL
        (SELECT h.* FROM generate_series(
             (SELECT t.priority FROM {schema}.jobs t
              WHERE t.queue = fq.name AND t.status = 'pending' AND t.run_at <= {now}
              ORDER BY t.priority DESC, t.run_at, t.id LIMIT 1) - fq.aging_cap,
             (SELECT t.priority FROM {schema}.jobs t
              WHERE t.queue = fq.name AND t.status = 'pending' AND t.run_at <= {now}
              ORDER BY t.priority DESC, t.run_at, t.id LIMIT 1) - 1) AS level
         CROSS JOIN LATERAL (
             SELECT j.id, j.queue, j.task, j.priority, j.run_at, j.concurrency_key,
                j.concurrency_limit, j.rate_key
             FROM {schema}.jobs j
             WHERE j.queue = fq.name AND j.status = 'pending' AND j.run_at <= {now}
               AND j.priority = level AND j.sequence_key IS NULL
             ORDER BY j.priority DESC, j.run_at, j.id
             LIMIT least(fq.free, %(limit)s) * 2 + 4
         ) h
         WHERE fq.aging_step IS NOT NULL)
        UNION ALL
        (SELECT j.id, j.queue, j.task, j.priority, j.run_at, j.concurrency_key,
                j.concurrency_limit, j.rate_key
         FROM {schema}.jobs j
         WHERE j.id IN (SELECT id FROM heads) AND j.queue = fq.name)
    ) s
    WHERE fq.free > 0
      AND NOT EXISTS (SELECT 1 FROM gates g WHERE g.queue = s.queue AND g.task = s.task
                                             AND g.gate IN ('shut', 'reopen'))
      AND (s.rate_key IS NULL
           OR coalesce((SELECT k.tokens FROM key_rates k WHERE k.queue = s.queue
                                                         AND k.key = s.rate_key),
                       fq.key_burst, 1) > 0)
      AND (s.concurrency_key IS NULL
           OR coalesce((SELECT b.n FROM busy b WHERE b.queue = fq.name
                                                 AND b.concurrency_key = s.concurrency_key),
                       0) < s.concurrency_limit)
), room AS (
    SELECT r.* FROM (
        SELECT s.*, row_number() OVER (PARTITION BY s.queue, s.concurrency_key
                                       ORDER BY s.claim_rank DESC, s.run_at, s.id) AS nth_of_key,
               row_number() OVER (PARTITION BY s.queue, s.task
                                  ORDER BY s.claim_rank DESC, s.run_at, s.id) AS nth_of_task,
               row_number() OVER (PARTITION BY s.queue, s.rate_key
                                  ORDER BY s.claim_rank DESC, s.run_at, s.id) AS nth_of_rate_key
        FROM scan s
    ) r
    LEFT JOIN busy b ON b.queue = r.queue AND b.concurrency_key = r.concurrency_key
    WHERE (r.concurrency_key IS NULL OR coalesce(b.n, 0) + r.nth_of_key <= r.concurrency_limit)
      AND (r.gate IS DISTINCT FROM 'probe' OR r.nth_of_task = 1)
      AND (r.rate_key IS NULL OR r.nth_of_rate_key <= r.key_tokens)
), chosen AS (
    SELECT c.id, c.queue, c.lease_seconds, c.rate_key FROM (
        SELECT r.*, row_number() OVER (PARTITION BY r.queue
                                       ORDER BY r.claim_rank DESC, r.run_at, r.id) AS nth_of_queue
        FROM room r
    ) c
    WHERE c.nth_of_queue <= c.free
    ORDER BY c.claim_rank DESC, c.run_at, c.id
    LIMIT %(limit)s
), {claim_chosen}, spent AS (
    -- the rate-limited queues' buckets pay for the jobs claimed; a throttle past is cleared
    UPDATE {schema}.queues q
    SET rate_tat = CASE WHEN fq.rate_count IS NOT NULL AND n.claimed > 0
                        THEN fq.tat + make_interval(secs => fq.emission * n.claimed)
                        ELSE q.rate_tat END,
        throttled_until = CASE WHEN q.throttled_until <= {now} THEN NULL
                               ELSE q.throttled_until END
    FROM fq
    LEFT JOIN (SELECT queue, count(*) AS claimed FROM claimed GROUP BY queue) n
           ON n.queue = fq.name
    WHERE q.name = fq.name
      AND ((fq.rate_count IS NOT NULL AND n.claimed > 0) OR fq.throttled_until <= {now})
), key_spent AS (
    -- the claimed jobs' rate keys pay their buckets (a row per key, made at its first claim);
    -- a throttle past is cleared
    INSERT INTO {schema}.rate_keys AS k (queue, key, tat)
    SELECT ch.queue, ch.rate_key,
           coalesce(max(kr.tat), {now}) + make_interval(secs => max(fq.key_emission) * count(*))
    FROM claimed c
    JOIN chosen ch ON ch.id = c.id
    JOIN fq ON fq.name = ch.queue
    LEFT JOIN key_rates kr ON kr.queue = ch.queue AND kr.key = ch.rate_key
    WHERE ch.rate_key IS NOT NULL AND fq.key_rate_count IS NOT NULL
    GROUP BY ch.queue, ch.rate_key
    ON CONFLICT (queue, key) DO UPDATE
    SET tat = EXCLUDED.tat,
        throttled_until = CASE WHEN k.throttled_until <= {now} THEN NULL
                               ELSE k.throttled_until END
), probed AS (
    -- a probe claimed: its breaker is half_open; a probe that finished: its breaker closes,
    -- a probe buried: it opens again (unless a failure written meanwhile changed its state)
    UPDATE {schema}.breakers b
    SET state = CASE WHEN g.gate = 'closed' THEN 'closed'
                     WHEN g.gate = 'reopen' THEN 'open' ELSE 'half_open' END,
        probe_id = CASE WHEN g.gate IN ('closed', 'reopen') THEN NULL ELSE c.id END,
        failures = CASE WHEN g.gate = 'closed' THEN 0 ELSE b.failures END,
        window_until = CASE WHEN g.gate = 'closed' THEN NULL ELSE b.window_until END,
        opened_at = CASE WHEN g.gate = 'reopen' THEN {now} ELSE b.opened_at END,
        open_until = CASE WHEN g.gate = 'reopen'
                          THEN {now} + make_interval(secs => b.cooldown_seconds)
                          ELSE b.open_until END,
        updated_at = {now}
    FROM gates g
    LEFT JOIN claimed c ON g.gate = 'probe' AND c.queue = g.queue AND c.task = g.task
    WHERE b.queue = g.queue AND b.task = g.task AND b.state = g.state
      AND (g.gate IN ('closed', 'reopen') OR c.id IS NOT NULL)
)
{settle_answer}

-- Claimers of a queue with max_workers or flow control (`flow`: claim_flow.sql) take turns, so
-- each one's count of in-flight jobs (read by the next statement, with a fresh snapshot)
-- includes every earlier claim. A queue row locked by someone else (another claimer, or an
-- operator's transaction left open) is skipped: this claim leaves that queue alone rather than
-- wait, and every other queue keeps flowing.
-- A flow queue's claim (claim_flow.sql) is planned without JIT: its estimates are rough and
-- compiling costs tens of milliseconds, far more than the statement (for this transaction only).
-- Nor is it planned anew each time (no_replan): planning it takes 5 to 30 ms, its run 1 to 3 ms
-- (issue 27), and its generic plan reads the same indexes; prepared (the worker's _wire.py,
-- psycopg's after a few runs), it is planned once per connection.
-- keys_only: a flow queue whose claim needs only its concurrency keys (claim_keyed.sql): what
-- could change it is this row, locked here, or a sequence job (claim_keyed.sql skips those).
SELECT name, flow, CASE WHEN flow THEN set_config('jit', 'off', true) END AS no_jit,
       CASE WHEN flow THEN set_config('plan_cache_mode', 'force_generic_plan', true)
       END AS no_replan,
       -- (CASE: the probe of sequence jobs only for a flow queue; AND may run it first)
       CASE WHEN flow AND rate_count IS NULL AND aging_step IS NULL AND throttled_until IS NULL
                 AND NOT breakers AND key_rate_count IS NULL
            THEN NOT EXISTS (SELECT 1 FROM {schema}.jobs s
                             WHERE s.queue = queues.name AND s.sequence_key IS NOT NULL)
            ELSE false END AS keys_only
FROM {schema}.queues
WHERE (max_workers IS NOT NULL OR flow)
  AND (%(queues)s::text[] IS NULL OR name = ANY(%(queues)s::text[]))
ORDER BY name
FOR UPDATE SKIP LOCKED

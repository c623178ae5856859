-- Claimers of a queue with max_workers or flow control (`flow`: claim_flow.sql) take turns, so
-- each one's count of in-flight jobs (read by the next statement, with a fresh snapshot)
-- includes every earlier claim. A queue row locked by someone else (another claimer, or an
-- operator's transaction left open) is skipped: this claim leaves that queue alone rather than
-- wait, and every other queue keeps flowing.
-- A flow queue's claim (claim_flow.sql) is planned without JIT: its estimates are rough and
-- compiling costs tens of milliseconds, far more than the statement (for this transaction only).
SELECT name, flow, CASE WHEN flow THEN set_config('jit', 'off', true) END AS no_jit
FROM {schema}.queues
WHERE (max_workers IS NOT NULL OR flow)
  AND (%(queues)s::text[] IS NULL OR name = ANY(%(queues)s::text[]))
ORDER BY name
FOR UPDATE SKIP LOCKED

-- One multi-row INSERT for a batch of un-keyed jobs: the caller writes `{rows}`, one
-- parenthesised row per job in these columns' order. Ids come back in the rows' order. The
-- jobs table's trigger makes each new queue's row.
INSERT INTO claimq_jobs (queue, task, payload, tags, idempotency_key, priority, max_attempts,
                         run_at, created_at, updated_at, timeout_seconds, retry, trace_context)
VALUES {rows}
RETURNING id

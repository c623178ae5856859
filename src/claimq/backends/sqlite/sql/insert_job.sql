INSERT INTO claimq_jobs (queue, task, payload, tags, idempotency_key, priority, max_attempts,
                         run_at, created_at, updated_at, timeout_seconds, retry, trace_context,
                         concurrency_key, concurrency_limit, sequence_key, sequence_wait, rate_key)
VALUES (:queue, :task, :payload, :tags, :idempotency_key, :priority, :max_attempts,
        :run_at, :now, :now, :timeout_seconds, :retry, :trace_context, :concurrency_key,
        :concurrency_limit, :sequence_key, :sequence_wait, :rate_key)
RETURNING id

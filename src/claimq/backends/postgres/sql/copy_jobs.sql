COPY {schema}.jobs (id, queue, task, payload, tags, priority, max_attempts, run_at,
                    created_at, updated_at, timeout_seconds, retry, trace_context,
                    concurrency_key, concurrency_limit, sequence_key, sequence_wait, rate_key)
FROM STDIN

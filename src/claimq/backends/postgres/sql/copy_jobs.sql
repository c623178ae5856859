COPY {schema}.jobs (id, queue, task, payload, tags, priority, max_attempts, run_at,
                    timeout_seconds, retry)
FROM STDIN

-- Enqueue: new ids, new jobs (COPY too), their queues' rows, idempotency keys (held keys are
-- locked and dropped; archive and dead are read to see whether a key is still held).
GRANT USAGE ON SEQUENCE {schema}.job_ids TO {role};
GRANT INSERT ON {schema}.jobs, {schema}.queues TO {role};
GRANT SELECT, INSERT, UPDATE, DELETE ON {schema}.idempotency_keys TO {role};

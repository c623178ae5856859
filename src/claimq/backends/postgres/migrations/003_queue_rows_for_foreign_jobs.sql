-- A job that another program inserts with plain SQL, into a queue that has no queues row,
-- must be claimed like any other (the claim reads queues for paused/active/max_workers).
-- One trigger per statement, reading the statement's new rows as a set: a COPY of 20,000 jobs
-- costs one INSERT ... SELECT DISTINCT, not 20,000 row triggers. claimq's own enqueue still
-- creates its queues first (ensure_queues.sql), so here the insert finds them and does nothing.
CREATE FUNCTION {schema}.jobs_queue_rows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO {schema}.queues (name)
    SELECT DISTINCT queue FROM new_jobs
    ON CONFLICT (name) DO NOTHING;
    RETURN NULL;
END
$$;

CREATE TRIGGER jobs_queue_rows AFTER INSERT ON {schema}.jobs
    REFERENCING NEW TABLE AS new_jobs
    FOR EACH STATEMENT EXECUTE FUNCTION {schema}.jobs_queue_rows();

-- Jobs inserted that way before this migration.
INSERT INTO {schema}.queues (name)
SELECT DISTINCT queue FROM {schema}.jobs
ON CONFLICT (name) DO NOTHING;

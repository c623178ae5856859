-- An idempotency key is held while its job is live, then for its window after the job finished
-- (_key_held.sql). The key's row records when its job finished, so the window outlives the
-- job's archive or dead-letter row (retention may prune those first: issue 24, defect 6).
-- Every move to the archive or the dead letters records it, whichever statement makes it: one
-- call per statement, reading the statement's rows as a set (a settle batch is one statement).
ALTER TABLE {schema}.idempotency_keys ADD COLUMN finished_at timestamptz;

CREATE FUNCTION {schema}.key_finished() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE {schema}.idempotency_keys k SET finished_at = f.finished_at
    FROM finished f
    WHERE f.idempotency_key IS NOT NULL AND k.key = f.idempotency_key AND k.job_id = f.id;
    RETURN NULL;
END
$$;

CREATE TRIGGER archive_key_finished AFTER INSERT ON {schema}.archive
    REFERENCING NEW TABLE AS finished
    FOR EACH STATEMENT EXECUTE FUNCTION {schema}.key_finished();
CREATE TRIGGER dead_key_finished AFTER INSERT ON {schema}.dead
    REFERENCING NEW TABLE AS finished
    FOR EACH STATEMENT EXECUTE FUNCTION {schema}.key_finished();

-- Keys whose jobs finished before this migration.
UPDATE {schema}.idempotency_keys k
SET finished_at = coalesce((SELECT a.finished_at FROM {schema}.archive a WHERE a.id = k.job_id),
                           (SELECT d.finished_at FROM {schema}.dead d WHERE d.id = k.job_id));

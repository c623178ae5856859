-- An idempotency key is held while its job is live, then for its window after the job finished
-- (_key_held.sql). The key's row records when its job finished, so the window outlives the
-- job's archive or dead-letter row (retention may prune those first: issue 24, defect 6).
-- Every move to the archive or the dead letters records it, whichever statement makes it.
ALTER TABLE claimq_idempotency ADD COLUMN finished_at REAL;

CREATE TRIGGER claimq_archive_key_finished AFTER INSERT ON claimq_archive
WHEN NEW.idempotency_key IS NOT NULL
BEGIN
    UPDATE claimq_idempotency SET finished_at = NEW.finished_at
    WHERE key = NEW.idempotency_key AND job_id = NEW.id;
END;

CREATE TRIGGER claimq_dead_key_finished AFTER INSERT ON claimq_dead
WHEN NEW.idempotency_key IS NOT NULL
BEGIN
    UPDATE claimq_idempotency SET finished_at = NEW.finished_at
    WHERE key = NEW.idempotency_key AND job_id = NEW.id;
END;

-- Keys whose jobs finished before this migration.
UPDATE claimq_idempotency SET finished_at = coalesce(
    (SELECT a.finished_at FROM claimq_archive a WHERE a.id = claimq_idempotency.job_id),
    (SELECT d.finished_at FROM claimq_dead d WHERE d.id = claimq_idempotency.job_id));

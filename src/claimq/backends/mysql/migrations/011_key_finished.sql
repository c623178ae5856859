-- An idempotency key is held while its job is live, then for its window after the job finished
-- (_key_held.sql). The key's row records when its job finished, so the window outlives the
-- job's archive or dead-letter row (retention may prune those first: issue 24, defect 6).
-- Every move to the archive or the dead letters records it, whichever statement makes it (a
-- job without a key: one primary-key probe that finds nothing).
ALTER TABLE claimq_idempotency ADD COLUMN finished_at DATETIME(6) NULL;

CREATE TRIGGER claimq_archive_key_finished AFTER INSERT ON claimq_archive FOR EACH ROW
    UPDATE claimq_idempotency SET finished_at = NEW.finished_at
    WHERE `key` = NEW.idempotency_key AND job_id = NEW.id;

CREATE TRIGGER claimq_dead_key_finished AFTER INSERT ON claimq_dead FOR EACH ROW
    UPDATE claimq_idempotency SET finished_at = NEW.finished_at
    WHERE `key` = NEW.idempotency_key AND job_id = NEW.id;

-- Keys whose jobs finished before this migration.
UPDATE claimq_idempotency k
LEFT JOIN claimq_archive a ON a.id = k.job_id
LEFT JOIN claimq_dead d ON d.id = k.job_id
SET k.finished_at = coalesce(a.finished_at, d.finished_at);

-- A running job's last reported progress (ctx.progress): a table of its own, so the job
-- tables, their statements and their hot path stay as they are. A row outlives its job's move
-- to the archive or dead letters (its last progress stays readable) until that job is purged.
CREATE TABLE claimq_progress (
    job_id     BIGINT NOT NULL PRIMARY KEY,
    fraction   DOUBLE NOT NULL CHECK (fraction >= 0 AND fraction <= 1),
    note       LONGTEXT NULL,
    attempt    INT NOT NULL,
    updated_at DATETIME(6) NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

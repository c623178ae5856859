-- Periodic schedules. `next_run_at` is the first tick not enqueued yet; a scheduler locks the
-- due rows (FOR UPDATE SKIP LOCKED), enqueues their ticks and moves next_run_at on in one
-- transaction, so each tick becomes exactly one job whichever worker gets there first.
CREATE TABLE claimq_schedules (
    name            VARCHAR(128) NOT NULL PRIMARY KEY,
    task            VARCHAR(256) NOT NULL,
    payload         LONGTEXT NOT NULL DEFAULT '{}' CHECK (json_valid(payload)),
    queue           VARCHAR(128) NOT NULL,
    priority        INT NOT NULL DEFAULT 0,
    max_attempts    INT NOT NULL DEFAULT 20 CHECK (max_attempts > 0),
    timeout_seconds DOUBLE NULL CHECK (timeout_seconds IS NULL OR timeout_seconds > 0),
    cron            VARCHAR(255) NULL,
    every_seconds   DOUBLE NULL CHECK (every_seconds IS NULL OR every_seconds > 0),
    tz              VARCHAR(64) NOT NULL DEFAULT 'UTC',
    missed          VARCHAR(16) NOT NULL DEFAULT 'latest'
                    CHECK (missed IN ('latest', 'all', 'skip')),
    paused          BOOLEAN NOT NULL DEFAULT FALSE,
    next_run_at     DATETIME(6) NOT NULL,
    last_run_at     DATETIME(6) NULL,
    last_job_id     BIGINT NULL,
    declared        LONGTEXT NULL,
    created_at      DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
    updated_at      DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
    CONSTRAINT claimq_schedules_one_kind CHECK ((cron IS NULL) <> (every_seconds IS NULL)),
    -- The due rows, in the order schedulers take them (no partial indexes here).
    KEY claimq_schedules_due (paused, next_run_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

-- Retention per queue ('*': every queue without a row of its own). NULL: no limit of that kind.
CREATE TABLE claimq_retention (
    queue        VARCHAR(128) NOT NULL PRIMARY KEY,
    archive_age  DOUBLE NULL CHECK (archive_age IS NULL OR archive_age >= 0),
    archive_rows BIGINT NULL CHECK (archive_rows IS NULL OR archive_rows >= 0),
    dead_age     DOUBLE NULL CHECK (dead_age IS NULL OR dead_age >= 0),
    dead_rows    BIGINT NULL CHECK (dead_rows IS NULL OR dead_rows >= 0),
    updated_at   DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

-- Named leases: work that one process at a time does across all workers (the pruner).
CREATE TABLE claimq_leases (
    name   VARCHAR(128) NOT NULL PRIMARY KEY,
    holder VARCHAR(255) NOT NULL,
    until  DATETIME(6) NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

-- Retention reads one queue's rows oldest first (and its newest, past the rows it keeps): the
-- queue index gains finished_at (InnoDB appends the id). It replaces the queue-only index, so
-- a completion or a dead letter writes no more index entries than before.
CREATE INDEX claimq_archive_queue_finished ON claimq_archive (queue, finished_at);
DROP INDEX claimq_archive_queue ON claimq_archive;
CREATE INDEX claimq_dead_queue_finished ON claimq_dead (queue, finished_at);
DROP INDEX claimq_dead_queue ON claimq_dead;

-- Times are DATETIME(6) in UTC (every claimq connection sets time_zone '+00:00'). Names, keys
-- and tags compare byte for byte, trailing spaces included (utf8mb4_nopad_bin). Ids come from
-- AUTO_INCREMENT, which InnoDB keeps across restarts (MariaDB >= 10.2.4), so an id is never
-- reused and a job keeps its id as it moves between the live, archive and dead tables.
CREATE TABLE claimq_queues (
    name            VARCHAR(128) NOT NULL PRIMARY KEY,
    paused          BOOLEAN NOT NULL DEFAULT FALSE,
    active          BOOLEAN NOT NULL DEFAULT TRUE,
    max_workers     INT NULL CHECK (max_workers IS NULL OR max_workers > 0),
    lease_seconds   DOUBLE NOT NULL DEFAULT 30 CHECK (lease_seconds > 0),
    timeout_seconds DOUBLE NULL CHECK (timeout_seconds IS NULL OR timeout_seconds > 0),
    created_at      DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
    updated_at      DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6))
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

CREATE TABLE claimq_jobs (
    id               BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    queue            VARCHAR(128) NOT NULL,
    task             VARCHAR(256) NOT NULL,
    payload          LONGTEXT NOT NULL CHECK (json_valid(payload)),
    tags             LONGTEXT NOT NULL DEFAULT '[]',
    idempotency_key  VARCHAR(255) NULL,
    priority         INT NOT NULL DEFAULT 0,
    status           VARCHAR(16) NOT NULL DEFAULT 'pending'
                     CHECK (status IN ('pending', 'fetched', 'processing')),
    attempts         INT NOT NULL DEFAULT 0,
    max_attempts     INT NOT NULL DEFAULT 20 CHECK (max_attempts > 0),
    worker_id        VARCHAR(255) NULL,
    claim_token      VARCHAR(64) NULL,
    lease_until      DATETIME(6) NULL,
    heartbeat_at     DATETIME(6) NULL,
    run_at           DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
    created_at       DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
    started_at       DATETIME(6) NULL,
    updated_at       DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
    errors           LONGTEXT NOT NULL DEFAULT '[]',
    cancel_requested BOOLEAN NOT NULL DEFAULT FALSE,
    timeout_seconds  DOUBLE NULL,
    retry            LONGTEXT NULL,
    -- The claim reads this index in claim order, queue by queue (no partial indexes here: the
    -- status column keeps pending rows together).
    KEY claimq_jobs_claimable (queue, status, priority DESC, run_at, id),
    -- The reaper and a worker's orphan check read in-flight rows by status.
    KEY claimq_jobs_inflight (status, lease_until)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

CREATE TABLE claimq_archive (
    id               BIGINT NOT NULL PRIMARY KEY,
    queue            VARCHAR(128) NOT NULL,
    task             VARCHAR(256) NOT NULL,
    payload          LONGTEXT NOT NULL,
    tags             LONGTEXT NOT NULL,
    idempotency_key  VARCHAR(255) NULL,
    priority         INT NOT NULL,
    attempts         INT NOT NULL,
    max_attempts     INT NOT NULL,
    worker_id        VARCHAR(255) NULL,
    run_at           DATETIME(6) NOT NULL,
    created_at       DATETIME(6) NOT NULL,
    started_at       DATETIME(6) NULL,
    finished_at      DATETIME(6) NOT NULL,
    duration         DOUBLE NULL,
    result           LONGTEXT NULL,
    errors           LONGTEXT NOT NULL,
    timeout_seconds  DOUBLE NULL,
    retry            LONGTEXT NULL,
    KEY claimq_archive_finished (finished_at),
    KEY claimq_archive_queue (queue)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

CREATE TABLE claimq_dead (
    id               BIGINT NOT NULL PRIMARY KEY,
    queue            VARCHAR(128) NOT NULL,
    task             VARCHAR(256) NOT NULL,
    payload          LONGTEXT NOT NULL,
    tags             LONGTEXT NOT NULL,
    idempotency_key  VARCHAR(255) NULL,
    priority         INT NOT NULL,
    attempts         INT NOT NULL,
    max_attempts     INT NOT NULL,
    worker_id        VARCHAR(255) NULL,
    run_at           DATETIME(6) NOT NULL,
    created_at       DATETIME(6) NOT NULL,
    started_at       DATETIME(6) NULL,
    finished_at      DATETIME(6) NOT NULL,
    reason           VARCHAR(64) NOT NULL,
    errors           LONGTEXT NOT NULL,
    timeout_seconds  DOUBLE NULL,
    retry            LONGTEXT NULL,
    KEY claimq_dead_finished (finished_at),
    KEY claimq_dead_queue (queue)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

-- Key -> the job that holds it, for as long as that job is live and a retention window after.
CREATE TABLE claimq_idempotency (
    `key`      VARCHAR(255) NOT NULL PRIMARY KEY,
    job_id     BIGINT NOT NULL,
    created_at DATETIME(6) NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

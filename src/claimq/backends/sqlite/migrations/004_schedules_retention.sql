-- Periodic schedules. `next_run_at` is the first tick not enqueued yet; a scheduler reads the
-- due rows, enqueues their ticks and moves next_run_at on in one write transaction (SQLite has
-- one writer at a time), so each tick becomes exactly one job whichever worker gets there first.
CREATE TABLE claimq_schedules (
    name            TEXT PRIMARY KEY,
    task            TEXT NOT NULL,
    payload         TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(payload)),
    queue           TEXT NOT NULL,
    priority        INTEGER NOT NULL DEFAULT 0,
    max_attempts    INTEGER NOT NULL DEFAULT 20 CHECK (max_attempts > 0),
    timeout_seconds REAL CHECK (timeout_seconds IS NULL OR timeout_seconds > 0),
    cron            TEXT,
    every_seconds   REAL CHECK (every_seconds IS NULL OR every_seconds > 0),
    tz              TEXT NOT NULL DEFAULT 'UTC',
    missed          TEXT NOT NULL DEFAULT 'latest' CHECK (missed IN ('latest', 'all', 'skip')),
    paused          INTEGER NOT NULL DEFAULT 0,
    next_run_at     REAL NOT NULL,
    last_run_at     REAL,
    last_job_id     INTEGER,
    declared        TEXT,
    created_at      REAL NOT NULL,
    updated_at      REAL NOT NULL,
    CHECK ((cron IS NULL) <> (every_seconds IS NULL))
);
CREATE INDEX claimq_schedules_due ON claimq_schedules (next_run_at) WHERE NOT paused;

-- Retention per queue ('*': every queue without a row of its own). NULL: no limit of that kind.
CREATE TABLE claimq_retention (
    queue        TEXT PRIMARY KEY,
    archive_age  REAL CHECK (archive_age IS NULL OR archive_age >= 0),
    archive_rows INTEGER CHECK (archive_rows IS NULL OR archive_rows >= 0),
    dead_age     REAL CHECK (dead_age IS NULL OR dead_age >= 0),
    dead_rows    INTEGER CHECK (dead_rows IS NULL OR dead_rows >= 0),
    updated_at   REAL NOT NULL
);

-- Named leases: work that one process at a time does across all workers (the pruner).
CREATE TABLE claimq_leases (
    name   TEXT PRIMARY KEY,
    holder TEXT NOT NULL,
    until  REAL NOT NULL
);

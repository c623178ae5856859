-- Times are unix epoch seconds (REAL). Ids come from AUTOINCREMENT, so an id is never reused,
-- and a job keeps its id as it moves between the live, archive and dead tables.
CREATE TABLE claimq_queues (
    name            TEXT PRIMARY KEY,
    paused          INTEGER NOT NULL DEFAULT 0,
    active          INTEGER NOT NULL DEFAULT 1,
    max_workers     INTEGER CHECK (max_workers IS NULL OR max_workers > 0),
    lease_seconds   REAL NOT NULL DEFAULT 30 CHECK (lease_seconds > 0),
    timeout_seconds REAL CHECK (timeout_seconds IS NULL OR timeout_seconds > 0),
    created_at      REAL NOT NULL,
    updated_at      REAL NOT NULL
);

CREATE TABLE claimq_jobs (
    id               INTEGER PRIMARY KEY AUTOINCREMENT,
    queue            TEXT NOT NULL,
    task             TEXT NOT NULL,
    payload          TEXT NOT NULL CHECK (json_valid(payload)),
    tags             TEXT NOT NULL DEFAULT '[]',
    idempotency_key  TEXT,
    priority         INTEGER NOT NULL DEFAULT 0,
    status           TEXT NOT NULL DEFAULT 'pending'
                     CHECK (status IN ('pending', 'fetched', 'processing')),
    attempts         INTEGER NOT NULL DEFAULT 0,
    max_attempts     INTEGER NOT NULL DEFAULT 20 CHECK (max_attempts > 0),
    worker_id        TEXT,
    claim_token      TEXT,
    lease_until      REAL,
    heartbeat_at     REAL,
    run_at           REAL NOT NULL,
    created_at       REAL NOT NULL,
    started_at       REAL,
    updated_at       REAL NOT NULL,
    errors           TEXT NOT NULL DEFAULT '[]',
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    timeout_seconds  REAL,
    retry            TEXT
);

-- The claim reads only this index: it holds pending rows alone, so it stays small.
CREATE INDEX claimq_jobs_claimable ON claimq_jobs (queue, priority DESC, run_at, id)
    WHERE status = 'pending';
-- Bulkhead counts and the reaper read in-flight rows only.
CREATE INDEX claimq_jobs_inflight ON claimq_jobs (queue)
    WHERE status IN ('fetched', 'processing');
CREATE INDEX claimq_jobs_lease ON claimq_jobs (lease_until)
    WHERE status IN ('fetched', 'processing');

CREATE TABLE claimq_archive (
    id               INTEGER PRIMARY KEY,
    queue            TEXT NOT NULL,
    task             TEXT NOT NULL,
    payload          TEXT NOT NULL,
    tags             TEXT NOT NULL,
    idempotency_key  TEXT,
    priority         INTEGER NOT NULL,
    attempts         INTEGER NOT NULL,
    max_attempts     INTEGER NOT NULL,
    worker_id        TEXT,
    run_at           REAL NOT NULL,
    created_at       REAL NOT NULL,
    started_at       REAL,
    finished_at      REAL NOT NULL,
    duration         REAL,
    result           TEXT,
    errors           TEXT NOT NULL,
    timeout_seconds  REAL,
    retry            TEXT
);
CREATE INDEX claimq_archive_finished ON claimq_archive (finished_at);

CREATE TABLE claimq_dead (
    id               INTEGER PRIMARY KEY,
    queue            TEXT NOT NULL,
    task             TEXT NOT NULL,
    payload          TEXT NOT NULL,
    tags             TEXT NOT NULL,
    idempotency_key  TEXT,
    priority         INTEGER NOT NULL,
    attempts         INTEGER NOT NULL,
    max_attempts     INTEGER NOT NULL,
    worker_id        TEXT,
    run_at           REAL NOT NULL,
    created_at       REAL NOT NULL,
    started_at       REAL,
    finished_at      REAL NOT NULL,
    reason           TEXT NOT NULL,
    errors           TEXT NOT NULL,
    timeout_seconds  REAL,
    retry            TEXT
);
CREATE INDEX claimq_dead_finished ON claimq_dead (finished_at);

-- Key -> the job that holds it, for as long as that job is live and a retention window after.
CREATE TABLE claimq_idempotency (
    key        TEXT PRIMARY KEY,
    job_id     INTEGER NOT NULL,
    created_at REAL NOT NULL
);

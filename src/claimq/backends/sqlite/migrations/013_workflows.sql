-- Workflows (issue 26, docs/workflows.md): jobs with dependency edges. A job whose
-- dependencies have not all finished lives in claimq_held (never read by the claim) and moves
-- to claimq_jobs, keeping its id, in the transaction that finishes its last dependency
-- (backends/_workflow.py's release rule).
CREATE TABLE claimq_workflows (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    name            TEXT NOT NULL,
    idempotency_key TEXT UNIQUE,
    on_failure      TEXT NOT NULL CHECK (on_failure IN ('cancel', 'run', 'wait')),
    created_at      REAL NOT NULL
);

-- child waits for parent; position: the parent's index among the child's dependencies (the
-- order of fan-in results); on_failure: the edge's policy, resolved at insert; resolved: the
-- parent's end has been counted (once, even if it ends again after a resurrect).
CREATE TABLE claimq_deps (
    child       INTEGER NOT NULL,
    parent      INTEGER NOT NULL,
    workflow_id INTEGER NOT NULL,
    position    INTEGER NOT NULL,
    on_failure  TEXT NOT NULL CHECK (on_failure IN ('cancel', 'run', 'wait')),
    resolved    INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (child, parent)
) WITHOUT ROWID;
CREATE INDEX claimq_deps_parent ON claimq_deps (parent);
CREATE INDEX claimq_deps_workflow ON claimq_deps (workflow_id);

-- Partial indexes: a job outside every workflow adds no index entry (no cost on the claim's
-- and the completion's writes).
ALTER TABLE claimq_jobs ADD COLUMN workflow_id INTEGER;
CREATE INDEX claimq_jobs_workflow ON claimq_jobs (workflow_id) WHERE workflow_id IS NOT NULL;
ALTER TABLE claimq_archive ADD COLUMN workflow_id INTEGER;
CREATE INDEX claimq_archive_workflow ON claimq_archive (workflow_id)
    WHERE workflow_id IS NOT NULL;
ALTER TABLE claimq_dead ADD COLUMN workflow_id INTEGER;
-- A held job buried keeps its run_if, so that a resurrect holds it with the same condition.
ALTER TABLE claimq_dead ADD COLUMN run_if TEXT;
CREATE INDEX claimq_dead_workflow ON claimq_dead (workflow_id) WHERE workflow_id IS NOT NULL;

-- Every column of claimq_jobs, in its order (status holds the status it takes when released:
-- reads show 'held'), plus waiting (unresolved edges left) and run_if (NULL: run when
-- released; 'failed': only if a dependency ended dead, else archived unrun).
CREATE TABLE claimq_held (
    id                INTEGER PRIMARY KEY,
    queue             TEXT NOT NULL,
    task              TEXT NOT NULL,
    payload           TEXT NOT NULL CHECK (json_valid(payload)),
    tags              TEXT NOT NULL DEFAULT '[]',
    idempotency_key   TEXT,
    priority          INTEGER NOT NULL DEFAULT 0,
    status            TEXT NOT NULL DEFAULT 'pending',
    attempts          INTEGER NOT NULL DEFAULT 0,
    max_attempts      INTEGER NOT NULL DEFAULT 20 CHECK (max_attempts > 0),
    worker_id         TEXT,
    claim_token       TEXT,
    lease_until       REAL,
    heartbeat_at      REAL,
    run_at            REAL NOT NULL,
    created_at        REAL NOT NULL,
    started_at        REAL,
    updated_at        REAL NOT NULL,
    errors            TEXT NOT NULL DEFAULT '[]',
    cancel_requested  INTEGER NOT NULL DEFAULT 0,
    timeout_seconds   REAL,
    retry             TEXT,
    trace_context     TEXT,
    concurrency_key   TEXT,
    concurrency_limit INTEGER CHECK (concurrency_limit IS NULL OR concurrency_limit > 0),
    sequence_key      TEXT,
    sequence_wait     INTEGER,
    rate_key          TEXT,
    workflow_id       INTEGER,
    waiting           INTEGER NOT NULL,
    run_if            TEXT CHECK (run_if IS NULL OR run_if = 'failed')
);
CREATE INDEX claimq_held_workflow ON claimq_held (workflow_id);

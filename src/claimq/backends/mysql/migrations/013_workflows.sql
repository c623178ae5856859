-- Workflows (issue 26, docs/workflows.md): jobs with dependency edges. A job whose dependencies
-- have not all finished lives in claimq_held (never read by the claim) and moves held -> jobs,
-- keeping its id, in the transaction that finishes its last dependency (backends/_workflow.py,
-- run statement by statement: MariaDB's triggers cannot write the table their statement
-- uses). A queue without workflows reads none of these tables.
CREATE TABLE claimq_workflows (
    id              BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY,
    name            LONGTEXT NOT NULL,
    idempotency_key VARCHAR(255) NULL,
    on_failure      VARCHAR(16) NOT NULL CHECK (on_failure IN ('cancel', 'run', 'wait')),
    created_at      DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
    UNIQUE KEY claimq_workflows_key (idempotency_key)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

-- Edges: `child` waits for `parent`. position: the parent's index among the child's
-- dependencies (the order of fan-in results); on_failure: the edge's policy when the parent
-- ends dead; resolved: the parent's end was counted (once: a parent finishing again after a
-- resurrect counts only if the resurrect set the edge unresolved again).
CREATE TABLE claimq_deps (
    child       BIGINT NOT NULL,
    parent      BIGINT NOT NULL,
    workflow_id BIGINT NOT NULL,
    position    INT NOT NULL,
    on_failure  VARCHAR(16) NOT NULL CHECK (on_failure IN ('cancel', 'run', 'wait')),
    resolved    BOOLEAN NOT NULL DEFAULT FALSE,
    PRIMARY KEY (child, parent),
    KEY claimq_deps_parent (parent),
    KEY claimq_deps_workflow (workflow_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

-- The workflow a job belongs to, in every table it can be in (the status of a workflow and the
-- retention rule read by it). NULL: a job outside any workflow.
ALTER TABLE claimq_jobs ADD COLUMN workflow_id BIGINT NULL;
CREATE INDEX claimq_jobs_workflow ON claimq_jobs (workflow_id);
ALTER TABLE claimq_archive ADD COLUMN workflow_id BIGINT NULL;
CREATE INDEX claimq_archive_workflow ON claimq_archive (workflow_id);
-- run_if: kept on a dead letter buried out of held, so that its resurrect restores it.
ALTER TABLE claimq_dead ADD COLUMN workflow_id BIGINT NULL, ADD COLUMN run_if VARCHAR(16) NULL;
CREATE INDEX claimq_dead_workflow ON claimq_dead (workflow_id);

-- Held jobs: every column of claimq_jobs (names, types, order and defaults, through migration
-- 013), then `waiting` (unresolved edges left: decremented by one UPDATE per release, whose row
-- lock makes two parents finishing at once count one after the other) and `run_if` (NULL: run
-- when released; 'failed': only if a dependency ended dead, else archived unrun). The id is
-- the job's for life (given by claimq_jobs' AUTO_INCREMENT): no AUTO_INCREMENT here.
CREATE TABLE claimq_held (
    id                BIGINT NOT NULL PRIMARY KEY,
    queue             VARCHAR(128) NOT NULL,
    task              VARCHAR(256) NOT NULL,
    payload           LONGTEXT NOT NULL CHECK (json_valid(payload)),
    tags              LONGTEXT NOT NULL DEFAULT '[]',
    idempotency_key   VARCHAR(255) NULL,
    priority          INT NOT NULL DEFAULT 0,
    status            VARCHAR(16) NOT NULL DEFAULT 'pending'
                      CHECK (status IN ('pending', 'fetched', 'processing')),
    attempts          INT NOT NULL DEFAULT 0,
    max_attempts      INT NOT NULL DEFAULT 20 CHECK (max_attempts > 0),
    worker_id         VARCHAR(255) NULL,
    claim_token       VARCHAR(64) NULL,
    lease_until       DATETIME(6) NULL,
    heartbeat_at      DATETIME(6) NULL,
    run_at            DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
    created_at        DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
    started_at        DATETIME(6) NULL,
    updated_at        DATETIME(6) NOT NULL DEFAULT (UTC_TIMESTAMP(6)),
    errors            LONGTEXT NOT NULL DEFAULT '[]',
    cancel_requested  BOOLEAN NOT NULL DEFAULT FALSE,
    timeout_seconds   DOUBLE NULL,
    retry             LONGTEXT NULL,
    trace_context     VARCHAR(512) NULL,
    concurrency_key   VARCHAR(255) NULL,
    concurrency_limit INT NULL CHECK (concurrency_limit IS NULL OR concurrency_limit > 0),
    sequence_key      VARCHAR(255) NULL,
    sequence_wait     BOOLEAN NULL,
    rate_key          VARCHAR(255) NULL,
    workflow_id       BIGINT NULL,
    waiting           INT NOT NULL,
    run_if            VARCHAR(16) NULL CHECK (run_if IS NULL OR run_if = 'failed'),
    KEY claimq_held_workflow (workflow_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_nopad_bin;

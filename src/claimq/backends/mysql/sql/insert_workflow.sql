-- A new workflow's row (add_workflow, or spawn from a job outside any workflow). A key that
-- names a workflow already fails on its unique index (the caller then reads that one).
INSERT INTO claimq_workflows (name, idempotency_key, on_failure, created_at)
VALUES (%(name)s, %(key)s, %(on_failure)s, {now})
RETURNING id

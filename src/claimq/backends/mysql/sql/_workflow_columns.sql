-- A workflow row as WorkflowInfo reads it: {workflow_columns}.
id, name, idempotency_key, on_failure, created_at

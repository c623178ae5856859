-- cancel_workflow of running jobs: each worker sees the flag at its next heartbeat.
UPDATE claimq_jobs SET cancel_requested = TRUE, updated_at = {now} WHERE id IN %(ids)s

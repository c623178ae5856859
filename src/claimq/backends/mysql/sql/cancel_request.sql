-- Cancel of a running job: its worker sees the flag at its next heartbeat.
UPDATE claimq_jobs SET cancel_requested = TRUE, updated_at = {now} WHERE id = %(id)s

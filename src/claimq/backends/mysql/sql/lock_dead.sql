-- The dead letter a resurrect moves, locked, with its idempotency key. No row: no such dead
-- letter.
SELECT id, idempotency_key, workflow_id FROM claimq_dead WHERE id = %(id)s FOR UPDATE

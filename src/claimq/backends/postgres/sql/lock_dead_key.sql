-- The dead letter a resurrect moves, locked (a second resurrect or a purge of it waits), with
-- its idempotency key and its workflow. No row: no such dead letter.
SELECT id, idempotency_key, workflow_id FROM {schema}.dead WHERE id = %(id)s FOR UPDATE

-- The dead letter a resurrect moves, locked (a second resurrect or a purge of it waits), with
-- its idempotency key. No row: no such dead letter.
SELECT id, idempotency_key FROM {schema}.dead WHERE id = %(id)s FOR UPDATE

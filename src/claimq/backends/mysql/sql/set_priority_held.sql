-- set_priority of a held workflow job: its priority once released (run before set_priority.sql,
-- which then finds a job released meanwhile)
UPDATE claimq_held SET priority = %(priority)s, updated_at = {now}
WHERE id = %(id)s

-- set_priority of a held workflow job: its priority once released (run before set_priority.sql,
-- so a job released meanwhile is found by that statement's fresh snapshot instead)
UPDATE {schema}.held SET priority = %(priority)s, updated_at = {now}
WHERE id = %(id)s
RETURNING id

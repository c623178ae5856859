-- set_priority of a held workflow job: its priority once released
UPDATE claimq_held SET priority = :priority, updated_at = :now
WHERE id = :id
RETURNING id

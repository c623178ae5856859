DELETE FROM claimq_dead WHERE id IN (SELECT value FROM json_each(:ids))
RETURNING id

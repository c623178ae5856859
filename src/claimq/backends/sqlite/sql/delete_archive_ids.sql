DELETE FROM claimq_archive WHERE id IN (SELECT value FROM json_each(:ids))
RETURNING id

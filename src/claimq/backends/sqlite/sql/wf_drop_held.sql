DELETE FROM claimq_held WHERE id IN (SELECT value FROM json_each(:ids))

DELETE FROM claimq_jobs WHERE id IN (SELECT value FROM json_each(:ids))

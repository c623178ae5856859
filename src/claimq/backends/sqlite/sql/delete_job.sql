DELETE FROM claimq_jobs WHERE id = :id

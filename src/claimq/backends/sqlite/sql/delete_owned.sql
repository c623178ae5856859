DELETE FROM claimq_jobs WHERE id = :id AND claim_token = :token

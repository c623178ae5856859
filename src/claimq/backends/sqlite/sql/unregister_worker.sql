DELETE FROM claimq_workers WHERE id = :id RETURNING id

INSERT INTO claimq_queues (name, created_at, updated_at)
VALUES (:name, :now, :now)
ON CONFLICT (name) DO NOTHING

-- A queue given a job with a concurrency key: its claims count running jobs per key from now on.
UPDATE claimq_queues SET keyed = 1, updated_at = :now WHERE name = :name AND keyed = 0

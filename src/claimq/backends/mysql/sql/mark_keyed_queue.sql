-- A queue given a job with a concurrency key or a sequence key: its claims count running jobs
-- per key and find its sequences' heads from now on.
INSERT INTO claimq_queues (name, keyed, created_at, updated_at)
VALUES (%(name)s, TRUE, {now}, {now})
ON DUPLICATE KEY UPDATE keyed = TRUE

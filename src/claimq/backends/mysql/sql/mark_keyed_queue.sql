-- A queue given a job with a concurrency, sequence or rate key: its claims count running jobs
-- per key, find its sequences' heads and spend its rate keys' tokens from now on.
INSERT INTO claimq_queues (name, keyed, created_at, updated_at)
VALUES (%(name)s, TRUE, {now}, {now})
ON DUPLICATE KEY UPDATE keyed = TRUE

-- Whether a queue already counts running jobs per concurrency key (a plain read: only a queue
-- that does not yet is marked, mark_keyed_queue).
SELECT keyed FROM claimq_queues WHERE name = %(name)s

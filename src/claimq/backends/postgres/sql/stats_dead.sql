-- Dead letters by reason: an index-only scan of dead_queue_reason.
SELECT queue, task, reason, count(*) AS count FROM {schema}.dead GROUP BY queue, task, reason

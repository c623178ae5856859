-- Dead letters by reason: a scan of claimq_dead_queue_reason alone.
SELECT queue, task, reason, count(*) AS count FROM claimq_dead GROUP BY queue, task, reason

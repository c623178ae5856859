-- Throttled: the queue of a job that failed so pauses for every worker until :until.
UPDATE claimq_queues
SET throttled_until = max(coalesce(throttled_until, :until), :until)
WHERE name = (SELECT queue FROM claimq_jobs WHERE id = :id
              UNION ALL SELECT queue FROM claimq_dead WHERE id = :id LIMIT 1)

-- Throttled: the queue of a job that failed so pauses for every worker for %(after_us)s.
UPDATE claimq_queues
SET throttled_until = GREATEST(coalesce(throttled_until, TIMESTAMPADD(MICROSECOND, %(after_us)s, {now})),
                               TIMESTAMPADD(MICROSECOND, %(after_us)s, {now}))
WHERE name = (SELECT queue FROM claimq_jobs WHERE id = %(id)s
              UNION ALL SELECT queue FROM claimq_dead WHERE id = %(id)s LIMIT 1)

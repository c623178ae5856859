-- _limited.sql's reasons of the whole queue of job `j` (inactive, paused, throttled,
-- max_workers), or NULL: one probe of the queue's row (and, with max_workers, a count of its
-- running jobs).
(SELECT CASE WHEN NOT q.active THEN 'inactive'
             WHEN q.paused THEN 'paused'
             WHEN q.throttled_until > :now THEN 'throttled'
             WHEN q.max_workers IS NOT NULL
                  AND q.max_workers <= (SELECT count(*) FROM claimq_jobs r
                                        WHERE r.queue = q.name
                                          AND r.status IN ('fetched', 'processing'))
                 THEN 'max_workers' END
 FROM claimq_queues q WHERE q.name = j.queue)

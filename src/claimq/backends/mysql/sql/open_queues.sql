-- Claimable queues and how many more jobs each may hand out (bulkhead: max_workers counts every
-- fetched and processing job of the queue, whoever holds it; READ COMMITTED reads the latest).
-- A limited or flow-controlled queue only when this transaction holds its row
-- (lock_limited_queues); `flow`: the claim takes its jobs with claim_flow_candidates.
SELECT q.name,
       CASE WHEN q.max_workers IS NULL THEN %(limit)s
            ELSE GREATEST(q.max_workers - (SELECT count(*) FROM claimq_jobs r
                                           WHERE r.queue = q.name
                                             AND r.status IN ('fetched', 'processing')), 0)
       END AS free,
       q.lease_seconds, q.flow
FROM claimq_queues q
WHERE q.active AND NOT q.paused
  AND (%(queues)s IS NULL OR JSON_CONTAINS(%(queues)s, JSON_QUOTE(q.name)))
  AND ((q.max_workers IS NULL AND NOT q.flow) OR JSON_CONTAINS(%(limited)s, JSON_QUOTE(q.name)))

-- Claimers of a queue with max_workers take turns, so each one's count of in-flight jobs
-- (read by the next statement, with a fresh snapshot) includes every earlier claim.
SELECT name FROM {schema}.queues
WHERE max_workers IS NOT NULL
  AND (%(queues)s::text[] IS NULL OR name = ANY(%(queues)s::text[]))
ORDER BY name
FOR UPDATE

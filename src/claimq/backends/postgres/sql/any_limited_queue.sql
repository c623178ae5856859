-- Whether any of the queues a claim asks for has a max_workers limit or flow control (only
-- then does the claim need lock_limited_queues first; the claim itself skips limited queues it
-- does not hold).
SELECT EXISTS (
    SELECT 1 FROM {schema}.queues
    WHERE (max_workers IS NOT NULL OR flow)
      AND (%(queues)s::text[] IS NULL OR name = ANY(%(queues)s::text[]))
) AS found

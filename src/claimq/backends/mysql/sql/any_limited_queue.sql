-- Whether any of the queues a claim asks for has a max_workers limit or flow control (only then
-- does the claim need lock_limited_queues first).
SELECT EXISTS (
    SELECT 1 FROM claimq_queues
    WHERE (max_workers IS NOT NULL OR flow)
      AND (%(queues)s IS NULL OR JSON_CONTAINS(%(queues)s, JSON_QUOTE(name)))
) AS found

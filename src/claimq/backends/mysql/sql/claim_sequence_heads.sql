-- Ordered sequences (a plain read while this transaction holds the queue's row; READ COMMITTED:
-- the latest): per sequence key of the queue with pending jobs, its blocker is its first live
-- job in id order that is not a failed one of on_failure="skip" waiting for its retry. While
-- the blocker is out (fetched or processing), none; else the first due job up to the blocker
-- (a skipped job comes first once its retry is due). The claim locks them (claim_flow_rows).
-- The keys come from a loose index scan over claimq_jobs_sequence (GROUP BY its prefix: one
-- probe per key, however many jobs each has; a key without pending jobs has no head).
SELECT j.id
FROM (
    SELECT s.sequence_key,
           (SELECT b.id FROM claimq_jobs b
            WHERE b.queue = %(queue)s AND b.sequence_key = s.sequence_key
              AND (b.status <> 'pending' OR b.sequence_wait OR b.errors = '[]')
            ORDER BY b.id LIMIT 1) AS blocker
    FROM (SELECT sequence_key FROM claimq_jobs
          WHERE queue = %(queue)s AND sequence_key IS NOT NULL
          GROUP BY queue, sequence_key) s
) x
JOIN claimq_jobs j ON j.id = (
    SELECT c.id FROM claimq_jobs c
    WHERE c.queue = %(queue)s AND c.sequence_key = x.sequence_key AND c.status = 'pending'
      AND c.run_at <= {now} AND c.id <= coalesce(x.blocker, c.id)
    ORDER BY c.id LIMIT 1)
WHERE x.blocker IS NULL
   OR (SELECT b.status FROM claimq_jobs b WHERE b.id = x.blocker) = 'pending'

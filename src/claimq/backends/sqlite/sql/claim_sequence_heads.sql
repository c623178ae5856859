-- Ordered sequences: per sequence key of a queue with pending jobs, its blocker is its first
-- live job in id order that is not a failed one of on_failure="skip" waiting for its retry.
-- While the blocker runs, none; else the first due job up to the blocker (a skipped job comes
-- first once its retry is due).
-- The keys come from a skip scan over claimq_jobs_sequence (one probe per key, however many
-- jobs each has; a key without pending jobs has no head).
WITH RECURSIVE seqs(sequence_key) AS (
    SELECT (SELECT min(sequence_key) FROM claimq_jobs
            WHERE queue = :queue AND sequence_key IS NOT NULL)
    UNION ALL
    SELECT (SELECT min(sequence_key) FROM claimq_jobs
            WHERE queue = :queue AND sequence_key > seqs.sequence_key)
    FROM seqs
    WHERE seqs.sequence_key IS NOT NULL
), blockers AS (
    SELECT s.sequence_key,
           (SELECT b.id FROM claimq_jobs b
            WHERE b.queue = :queue AND b.sequence_key = s.sequence_key
              AND (b.status <> 'pending' OR b.sequence_wait OR b.errors = '[]')
            ORDER BY b.id LIMIT 1) AS blocker
    FROM seqs s
    WHERE s.sequence_key IS NOT NULL
)
SELECT j.id, j.task, j.priority, j.run_at, j.concurrency_key, j.concurrency_limit,
       j.rate_key
FROM blockers x
JOIN claimq_jobs j ON j.id = (
    SELECT c.id FROM claimq_jobs c
    WHERE c.queue = :queue AND c.sequence_key = x.sequence_key AND c.status = 'pending'
      AND c.run_at <= :now AND c.id <= coalesce(x.blocker, c.id)
    ORDER BY c.id LIMIT 1)
WHERE x.blocker IS NULL
   OR (SELECT b.status FROM claimq_jobs b WHERE b.id = x.blocker) = 'pending'
ORDER BY j.priority DESC, j.run_at, j.id

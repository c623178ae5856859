-- A flow queue's next concurrency key after %(after)s ('': its first; keys are not empty, and
-- compare without padding), by one index probe
-- (claimq_jobs_keyed; the claim asks again with each key found: a skip scan, one probe per
-- key however many jobs each has), and that key's first due pending job's limit (none: the
-- key has no job the claim could take). No row: no key after it.
SELECT ks.k,
       (SELECT j.concurrency_limit FROM claimq_jobs j FORCE INDEX (claimq_jobs_keyed)
        WHERE j.queue = %(queue)s AND j.concurrency_key = ks.k AND j.status = 'pending'
          AND j.sequence_key IS NULL AND j.run_at <= {now}
        ORDER BY j.priority DESC, j.run_at, j.id LIMIT 1) AS first_limit
FROM (SELECT min(concurrency_key) AS k FROM claimq_jobs
      WHERE queue = %(queue)s AND concurrency_key > %(after)s) ks
WHERE ks.k IS NOT NULL

-- Of these jobs (%(ids)s, a tuple), the limited ones (_limited.sql): why each waits, and its
-- concurrency or rate key when that is the reason (the dashboard's list of limited jobs).
SELECT id, reason, CASE reason WHEN 'concurrency' THEN concurrency_key
                               WHEN 'rate_key' THEN rate_key END AS held_key
FROM (SELECT j.id, j.concurrency_key, j.rate_key, {limited} AS reason
      FROM claimq_jobs j
      WHERE j.id IN %(ids)s
        AND j.status = 'pending' AND j.run_at <= {now}) AS d
WHERE reason IS NOT NULL

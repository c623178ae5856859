-- The heads of a flow-controlled queue's ordered sequences (claim_sequence_heads), locked, in
-- claim order; one another transaction holds or that is no longer due is skipped. By PRIMARY
-- (the ids': on a small table the optimizer would scan it all, or lock in-flight index records
-- before rows).
SELECT {job_columns}, concurrency_key, concurrency_limit, rate_key, {now} AS now
FROM claimq_jobs j FORCE INDEX (PRIMARY)
WHERE id IN %(ids)s AND status = 'pending' AND run_at <= {now}
ORDER BY priority DESC, run_at, id
FOR UPDATE SKIP LOCKED

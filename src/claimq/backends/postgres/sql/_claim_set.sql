-- What a claim writes to each job it takes (`j`, from candidates `c` with the queue's
-- lease_seconds): {claim_set} in settle.sql and claim_flow.sql.
SET status = CASE WHEN %(start)s THEN 'processing' ELSE 'fetched' END,
    attempts = j.attempts + CASE WHEN %(start)s THEN 1 ELSE 0 END,
    started_at = CASE WHEN %(start)s THEN {now} END,
    heartbeat_at = CASE WHEN %(start)s THEN {now} END,
    worker_id = %(worker_id)s,
    claim_token = gen_random_uuid(),
    lease_until = {now} + make_interval(secs => coalesce(%(lease)s, c.lease_seconds)),
    updated_at = {now}

-- A flow-controlled queue's circuit breakers that are not simply closed, with their probe's
-- status (NULL: the probe is no longer live) and whether it is a dead letter.
SELECT b.task, b.state, b.open_until, b.probe_id, p.status AS probe_status,
       -- a probe dead-lettered (by the reaper: its lease ran out; cancelled) failed
       EXISTS (SELECT 1 FROM claimq_dead d WHERE d.id = b.probe_id) AS probe_dead
FROM claimq_breakers b
LEFT JOIN claimq_jobs p ON p.id = b.probe_id
WHERE b.queue = :queue AND b.state <> 'closed'

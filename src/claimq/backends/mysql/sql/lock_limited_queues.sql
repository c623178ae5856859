-- Claimers of a queue with max_workers or flow control take turns: each holds the queue's row until its claim
-- commits, so the next one's count of in-flight jobs includes every earlier claim. A row locked
-- by someone else is skipped: this claim leaves that queue alone rather than wait.
SELECT name FROM claimq_queues
WHERE (max_workers IS NOT NULL OR flow)
  AND (%(queues)s IS NULL OR JSON_CONTAINS(%(queues)s, JSON_QUOTE(name)))
ORDER BY name
FOR UPDATE SKIP LOCKED

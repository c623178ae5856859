-- A throttle that has passed: the queue claims as before (and, with no other flow control,
-- plainly again).
UPDATE claimq_queues SET throttled_until = NULL
WHERE name = %(queue)s AND throttled_until <= {now}

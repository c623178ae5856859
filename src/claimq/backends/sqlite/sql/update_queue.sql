UPDATE claimq_queues
SET paused = coalesce(:paused, paused),
    active = coalesce(:active, active),
    max_workers = CASE WHEN :set_max_workers THEN :max_workers ELSE max_workers END,
    lease_seconds = coalesce(:lease_seconds, lease_seconds),
    timeout_seconds = CASE WHEN :set_timeout THEN :timeout_seconds ELSE timeout_seconds END,
    updated_at = :now
WHERE name = :name

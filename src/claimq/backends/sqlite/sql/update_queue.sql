UPDATE claimq_queues
SET paused = coalesce(:paused, paused),
    active = coalesce(:active, active),
    max_workers = CASE WHEN :set_max_workers THEN :max_workers ELSE max_workers END,
    lease_seconds = coalesce(:lease_seconds, lease_seconds),
    timeout_seconds = CASE WHEN :set_timeout THEN :timeout_seconds ELSE timeout_seconds END,
    rate_count = CASE WHEN :set_rate THEN :rate_count ELSE rate_count END,
    rate_period = CASE WHEN :set_rate THEN :rate_period ELSE rate_period END,
    rate_burst = CASE WHEN :set_rate THEN :rate_burst ELSE rate_burst END,
    rate_tat = CASE WHEN :set_rate THEN NULL ELSE rate_tat END,  -- a new limit: a full bucket
    aging_step = CASE WHEN :set_aging THEN :aging_step ELSE aging_step END,
    aging_cap = CASE WHEN :set_aging THEN :aging_cap ELSE aging_cap END,
    key_rate_count = CASE WHEN :set_key_rate THEN :key_rate_count ELSE key_rate_count END,
    key_rate_period = CASE WHEN :set_key_rate THEN :key_rate_period ELSE key_rate_period END,
    key_rate_burst = CASE WHEN :set_key_rate THEN :key_rate_burst ELSE key_rate_burst END,
    updated_at = :now
WHERE name = :name

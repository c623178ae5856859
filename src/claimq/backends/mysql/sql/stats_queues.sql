SELECT name, paused, active, max_workers, throttled_until FROM claimq_queues ORDER BY name

SELECT name, paused, active, max_workers FROM claimq_queues ORDER BY name

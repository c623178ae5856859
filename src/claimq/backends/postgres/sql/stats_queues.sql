SELECT name, paused, active, max_workers, throttled_until FROM {schema}.queues ORDER BY name

SELECT name, paused, active, max_workers FROM {schema}.queues ORDER BY name

INSERT INTO {schema}.queues (name)
SELECT unnest(%(names)s::text[])
ON CONFLICT (name) DO NOTHING

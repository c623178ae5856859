INSERT INTO {schema}.queues (name, created_at, updated_at)
SELECT name, {now}, {now} FROM unnest(%(names)s::text[]) AS name
ON CONFLICT (name) DO NOTHING

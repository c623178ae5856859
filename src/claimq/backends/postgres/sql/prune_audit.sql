-- A bounded batch of audit entries older than the App's audit_age (the pruner), oldest first.
DELETE FROM {schema}.audit WHERE id IN (
    SELECT id FROM {schema}.audit
    WHERE at < {now} - make_interval(secs => %(age)s::float8)
    ORDER BY id LIMIT %(batch)s
)

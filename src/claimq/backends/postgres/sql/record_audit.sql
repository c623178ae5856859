INSERT INTO {schema}.audit (at, actor, action, target, detail, affected)
VALUES ({now}, %(actor)s, %(action)s, %(target)s, %(detail)s::jsonb, %(affected)s)
RETURNING id

SELECT * FROM {schema}.audit
WHERE (%(before)s::bigint IS NULL OR id < %(before)s)
ORDER BY id DESC
LIMIT %(limit)s

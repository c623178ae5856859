DELETE FROM {schema}.dead
WHERE (%(older_than)s::float8 IS NULL
       OR finished_at < {now} - make_interval(secs => %(older_than)s::float8))
  AND (%(queue)s::text IS NULL OR queue = %(queue)s)
  AND (%(task)s::text IS NULL OR task = %(task)s)

SELECT * FROM {live_rows} AS live
WHERE (%(queue)s::text IS NULL OR queue = %(queue)s)
  AND (%(task)s::text IS NULL OR task = %(task)s)
  AND (%(status)s::text IS NULL OR status = %(status)s)
ORDER BY id
LIMIT %(limit)s OFFSET %(offset)s

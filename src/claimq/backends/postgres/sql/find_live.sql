SELECT * FROM {live_rows} AS live
WHERE {find_where}
  AND (%(status)s::text IS NULL OR status = %(status)s)
ORDER BY id DESC
LIMIT %(limit)s

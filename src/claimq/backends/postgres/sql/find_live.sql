SELECT * FROM {live_rows} AS live
WHERE {find_where}
  AND (%(status)s::text IS NULL OR status = %(status)s)
  AND (%(state)s::text IS NULL OR {live_state} = %(state)s)
ORDER BY id DESC
LIMIT %(limit)s

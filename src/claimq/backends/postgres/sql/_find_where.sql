-- The filters find_jobs shares between tables (each adds its status or reason test).
(%(before)s::bigint IS NULL OR id < %(before)s)
AND (%(queue)s::text IS NULL OR queue = %(queue)s)
AND (%(task)s::text IS NULL OR task = %(task)s)
AND (%(tag)s::text IS NULL OR %(tag)s = ANY (tags))
AND (%(text)s::text IS NULL OR strpos(lower(payload::text), %(text)s) > 0
     OR strpos(lower(errors::text), %(text)s) > 0)

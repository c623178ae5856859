-- The filters find_jobs shares between tables (each adds its status or reason test): a tag is
-- one whole element of the tags array (a column that is not JSON has none); text is a
-- lower-case substring of the payload's or the history's JSON text.
(%(before)s IS NULL OR id < %(before)s)
AND (%(queue)s IS NULL OR queue = %(queue)s)
AND (%(task)s IS NULL OR task = %(task)s)
AND (%(tag)s IS NULL OR (json_valid(tags) AND JSON_CONTAINS(tags, JSON_QUOTE(%(tag)s))))
AND (%(text)s IS NULL OR LOCATE(%(text)s, LOWER(payload)) > 0
     OR LOCATE(%(text)s, LOWER(errors)) > 0)

SELECT s.*, s.payload::text AS payload_json FROM {schema}.schedules s
WHERE %(name)s::text IS NULL OR s.name = %(name)s
ORDER BY s.name

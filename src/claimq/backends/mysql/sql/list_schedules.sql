SELECT s.*, s.payload AS payload_json FROM claimq_schedules s
WHERE %(name)s IS NULL OR s.name = %(name)s
ORDER BY s.name

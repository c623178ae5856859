SELECT s.*, s.payload AS payload_json FROM claimq_schedules s
WHERE :name IS NULL OR s.name = :name
ORDER BY s.name

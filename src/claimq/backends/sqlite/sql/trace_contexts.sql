-- The enqueuers' trace contexts of jobs just claimed (read only while tracing is on).
SELECT id, trace_context FROM claimq_jobs
WHERE id IN (SELECT value FROM json_each(:ids)) AND trace_context IS NOT NULL

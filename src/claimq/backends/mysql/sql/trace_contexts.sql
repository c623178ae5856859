-- The enqueuers' trace contexts of jobs just claimed (read only while tracing is on).
SELECT id, trace_context FROM claimq_jobs
WHERE id IN %(ids)s AND trace_context IS NOT NULL

-- The enqueuers' trace contexts of jobs just claimed (read only while tracing is on).
SELECT id, trace_context FROM {schema}.jobs
WHERE id = ANY(%(ids)s::bigint[]) AND trace_context IS NOT NULL

-- The live jobs as list_jobs / find_jobs read them: the jobs table and the held workflow jobs
-- (status 'held'), with the same columns.
(SELECT {job_read} FROM {schema}.jobs UNION ALL SELECT {held_read} FROM {schema}.held)

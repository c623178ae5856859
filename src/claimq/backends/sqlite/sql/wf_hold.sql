-- Moves new jobs jobs -> held (the caller then deletes them from jobs). :items: a JSON array
-- of [id, waiting, run_if].
WITH h AS (SELECT value ->> 0 AS job, value ->> 1 AS waiting, value ->> 2 AS run_if
           FROM json_each(:items))
INSERT INTO claimq_held ({job_columns}, waiting, run_if)
SELECT {job_columns}, h.waiting, h.run_if
FROM claimq_jobs JOIN h ON h.job = claimq_jobs.id

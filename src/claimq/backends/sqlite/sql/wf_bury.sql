-- Held jobs to dead letters because a dependency failed (the caller deletes the ids returned
-- from held). :items: a JSON array of [id, error entry as a JSON object].
WITH b AS (SELECT value ->> 0 AS job, value -> 1 AS error FROM json_each(:items))
INSERT INTO claimq_dead ({dead_columns}, run_if, finished_at, reason, errors)
SELECT {dead_columns}, run_if, :now, :reason,
       json_insert(claimq_errors(errors), '$[#]', json(b.error))
FROM claimq_held JOIN b ON b.job = claimq_held.id
RETURNING id

-- Cancel of held jobs (:ids): straight to dead letters (the caller deletes the ids returned).
INSERT INTO claimq_dead ({dead_columns}, run_if, finished_at, reason, errors)
SELECT {dead_columns}, run_if, :now, 'cancelled', errors
FROM claimq_held
WHERE id IN (SELECT value FROM json_each(:ids))
RETURNING id

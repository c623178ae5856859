-- :counts: a JSON array of [held id, edges just resolved]. The one write that counts: two
-- parents finishing in two transactions each subtract their own (SQLite: one writer).
UPDATE claimq_held SET waiting = waiting - c.n, updated_at = :now
FROM (SELECT value ->> 0 AS job, value ->> 1 AS n FROM json_each(:counts)) AS c
WHERE claimq_held.id = c.job

-- :counts: a JSON array of [held id, unresolved edges].
UPDATE claimq_held SET waiting = c.n, updated_at = :now
FROM (SELECT value ->> 0 AS job, value ->> 1 AS n FROM json_each(:counts)) AS c
WHERE claimq_held.id = c.job

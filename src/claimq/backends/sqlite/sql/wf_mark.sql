-- :marks: a JSON array of [parent, child, resolved].
UPDATE claimq_deps SET resolved = m.r
FROM (SELECT value ->> 0 AS p, value ->> 1 AS c, value ->> 2 AS r FROM json_each(:marks)) AS m
WHERE claimq_deps.parent = m.p AND claimq_deps.child = m.c

-- :edges: a JSON array of [parent, child].
UPDATE claimq_deps SET resolved = 1
WHERE (parent, child) IN (SELECT value ->> 0, value ->> 1 FROM json_each(:edges))

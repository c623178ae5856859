-- :edges: a JSON array of [child, parent, position, on_failure].
INSERT INTO claimq_deps (child, parent, workflow_id, position, on_failure)
SELECT value ->> 0, value ->> 1, :workflow_id, value ->> 2, value ->> 3 FROM json_each(:edges)

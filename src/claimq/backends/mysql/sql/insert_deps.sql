-- New edges: items are [child, parent, position, on_failure].
INSERT INTO claimq_deps (child, parent, workflow_id, position, on_failure)
SELECT d.child, d.parent, %(workflow_id)s, d.position, d.on_failure
FROM JSON_TABLE(%(items)s, '$[*]' COLUMNS (
    child BIGINT PATH '$[0]', parent BIGINT PATH '$[1]', position INT PATH '$[2]',
    on_failure VARCHAR(16) PATH '$[3]')) AS d

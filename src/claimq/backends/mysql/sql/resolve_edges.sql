-- Edges counted by the release rule: items are [parent, child].
UPDATE claimq_deps e
JOIN JSON_TABLE(%(items)s, '$[*]' COLUMNS (
    parent BIGINT PATH '$[0]', child BIGINT PATH '$[1]')) AS d
  ON d.child = e.child AND d.parent = e.parent
SET e.resolved = TRUE
WHERE e.child IN %(children)s

-- Resurrect: each edge's resolved flag re-derived; items are [parent, child, resolved].
UPDATE claimq_deps e
JOIN JSON_TABLE(%(items)s, '$[*]' COLUMNS (
    parent BIGINT PATH '$[0]', child BIGINT PATH '$[1]',
    resolved BOOLEAN PATH '$[2]')) AS d
  ON d.child = e.child AND d.parent = e.parent
SET e.resolved = d.resolved
WHERE e.child IN %(children)s

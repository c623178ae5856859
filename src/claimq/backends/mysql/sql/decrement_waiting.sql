-- The release rule's one counting write: per held child, waiting -= n (items [child, n], by
-- child id: rows locked in id order). Two parents finishing at once in two transactions
-- queue for the child's row lock, and the second decrements what the first committed.
UPDATE claimq_held h
JOIN JSON_TABLE(%(items)s, '$[*]' COLUMNS (
    child BIGINT PATH '$[0]', n INT PATH '$[1]')) AS d ON d.child = h.id
SET h.waiting = h.waiting - d.n
WHERE h.id IN %(ids)s

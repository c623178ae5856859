-- Resurrect: each restored job's waiting re-derived from its edges (items [id, n]).
UPDATE claimq_held h
JOIN JSON_TABLE(%(items)s, '$[*]' COLUMNS (
    item_id BIGINT PATH '$[0]', n INT PATH '$[1]')) AS d ON d.item_id = h.id
SET h.waiting = d.n
WHERE h.id IN %(ids)s

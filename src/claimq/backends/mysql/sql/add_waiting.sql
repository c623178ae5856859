-- Spawn: the spawner's dependents wait for each new job too (items [id, n], by id).
UPDATE claimq_held h
JOIN JSON_TABLE(%(items)s, '$[*]' COLUMNS (
    item_id BIGINT PATH '$[0]', n INT PATH '$[1]')) AS d ON d.item_id = h.id
SET h.waiting = h.waiting + d.n
WHERE h.id IN %(ids)s

-- The concurrency keys of jobs this transaction just inserted: [[id, key, limit], ...].
UPDATE claimq_jobs j
JOIN JSON_TABLE(%(items)s, '$[*]' COLUMNS (
    item_id BIGINT PATH '$[0]', item_key VARCHAR(255) PATH '$[1]',
    item_limit INT PATH '$[2]')) AS c ON c.item_id = j.id
SET j.concurrency_key = c.item_key, j.concurrency_limit = c.item_limit
WHERE j.id IN %(ids)s

-- The flow keys of jobs this transaction just inserted:
-- [[id, concurrency key, its limit, sequence key, sequence_wait (1/0), rate key], ...].
UPDATE claimq_jobs j
JOIN JSON_TABLE(%(items)s, '$[*]' COLUMNS (
    item_id BIGINT PATH '$[0]', item_key VARCHAR(255) PATH '$[1]',
    item_limit INT PATH '$[2]', item_sequence VARCHAR(255) PATH '$[3]',
    item_wait INT PATH '$[4]', item_rate VARCHAR(255) PATH '$[5]')) AS c ON c.item_id = j.id
SET j.concurrency_key = c.item_key, j.concurrency_limit = c.item_limit,
    j.sequence_key = c.item_sequence, j.sequence_wait = c.item_wait, j.rate_key = c.item_rate
WHERE j.id IN %(ids)s

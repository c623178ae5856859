-- The rate keys prune_rate_keys.sql locked (%(keys)s: a JSON array of [queue, key]).
DELETE k FROM claimq_rate_keys k
JOIN JSON_TABLE(%(keys)s, '$[*]' COLUMNS (
    q VARCHAR(128) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$[0]',
    rk VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_nopad_bin PATH '$[1]')) AS d
  ON k.queue = d.q AND k.rate_key = d.rk

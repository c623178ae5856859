-- A queue's (`q`) free slots under its max_workers, at most the claim's limit (settle.sql,
-- claim_flow.sql, claim_keyed.sql).
CASE WHEN q.max_workers IS NULL THEN %(limit)s
     -- the statement's snapshot still counts the jobs it completes (done): add them back
     ELSE greatest(q.max_workers - (SELECT count(*) FROM {schema}.jobs r
                                    WHERE r.queue = q.name
                                      AND r.status IN ('fetched', 'processing'))
                                 + (SELECT count(*) FROM done d WHERE d.queue = q.name),
                   0)
END

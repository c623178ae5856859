-- ctx.ensure_owned() when the job's row stayed locked past the short wait: the token and
-- status last committed, read without the lock (still this token: still ours, not renewed).
SELECT id, cancel_requested
FROM {schema}.jobs
WHERE id = %(id)s
  AND claim_token::text = %(token)s
  AND status IN ('fetched', 'processing')

UPDATE {schema}.jobs SET run_at = {now}, updated_at = {now}
WHERE id = ANY (%(ids)s::bigint[]) AND status = 'pending' AND run_at > {now}
RETURNING id, pg_notify('{schema}_jobs', queue)

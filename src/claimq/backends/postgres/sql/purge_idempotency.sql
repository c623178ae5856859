DELETE FROM {schema}.idempotency_keys k
WHERE NOT EXISTS (SELECT 1 FROM {schema}.jobs j WHERE j.id = k.job_id)
  AND NOT EXISTS (SELECT 1 FROM {schema}.archive a
                  WHERE a.id = k.job_id
                    AND a.finished_at >= {now} - make_interval(secs => %(retention)s))
  AND NOT EXISTS (SELECT 1 FROM {schema}.dead d
                  WHERE d.id = k.job_id
                    AND d.finished_at >= {now} - make_interval(secs => %(retention)s))

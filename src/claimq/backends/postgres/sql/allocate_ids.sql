-- Ids for a bulk COPY, and the transaction's clock for jobs due "now" or after a delay.
SELECT now() AS now, array_agg(nextval('{schema}.job_ids') ORDER BY n) AS ids
FROM generate_series(1, %(n)s) AS n

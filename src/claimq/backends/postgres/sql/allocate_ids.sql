-- Ids for a bulk COPY, and the transaction's clock for jobs due "now" or after a delay. The
-- caller sorts the ids (an ORDER BY here cost as much as drawing them).
SELECT {now} AS now, array_agg(nextval('{schema}.job_ids')) AS ids
FROM generate_series(1, %(n)s)

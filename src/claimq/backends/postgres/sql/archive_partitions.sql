-- The archive's partitions and their upper bounds (NULL: the default partition); no rows when
-- the archive is not partitioned.
SELECT c.relname AS name,
       substring(pg_get_expr(c.relpartbound, c.oid) FROM 'TO \(''([^'']+)''\)')::timestamptz
           AS upper_bound
FROM pg_inherits i
JOIN pg_class c ON c.oid = i.inhrelid
WHERE i.inhparent = to_regclass('{schema}.archive')
ORDER BY upper_bound NULLS LAST

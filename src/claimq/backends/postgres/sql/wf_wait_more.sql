-- Held jobs wait for more dependencies (spawn: the spawner's dependents wait for its new jobs).
UPDATE {schema}.held h SET waiting = h.waiting + m.n, updated_at = {now}
FROM unnest(%(ids)s::bigint[], %(counts)s::int[]) AS m(id, n)
WHERE h.id = m.id

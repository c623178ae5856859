-- One bounded batch of retention for {table} (archive or dead, filled in by the backend): rows
-- of one queue (or of every queue but those with a policy of their own) finished before the
-- age limit, or older than the queue's keep_rows newest. SKIP LOCKED: never waits on a row.
-- `upto`, the later of the two limits, bounds the index range read: once nothing is left to
-- delete, a batch reads no row younger than the limits (not the whole archive). A workflow's
-- finished jobs stay while one of its jobs is live; once none is left anywhere, the workflow's
-- row and edges go with its last rows.
WITH beyond AS (
    SELECT t.finished_at, t.id FROM {schema}.{table} t
    WHERE %(keep_rows)s::bigint IS NOT NULL
      AND (%(queue)s::text IS NULL OR t.queue = %(queue)s)
      AND (%(queue)s::text IS NOT NULL OR t.queue <> ALL(%(skip)s::text[]))
    ORDER BY t.finished_at DESC, t.id DESC
    OFFSET coalesce(%(keep_rows)s::bigint, 0)
    LIMIT 1
), upto AS (
    SELECT greatest({now} - make_interval(secs => %(older_than)s::float8),
                    (SELECT b.finished_at FROM beyond b)) AS at
), doomed AS (
    SELECT t.id FROM {schema}.{table} t
    WHERE t.finished_at <= (SELECT u.at FROM upto u)
      AND (%(queue)s::text IS NULL OR t.queue = %(queue)s)
      AND (%(queue)s::text IS NOT NULL OR t.queue <> ALL(%(skip)s::text[]))
      AND (t.finished_at < {now} - make_interval(secs => %(older_than)s::float8)
           OR (t.finished_at, t.id) <= (SELECT b.finished_at, b.id FROM beyond b))
      AND {workflow_done}
    ORDER BY t.finished_at
    LIMIT %(batch)s
    FOR UPDATE SKIP LOCKED
), deleted AS (
    DELETE FROM {schema}.{table} t USING doomed d WHERE t.id = d.id
    RETURNING t.id, t.workflow_id
), {workflows_gone}
SELECT count(*) AS n FROM deleted

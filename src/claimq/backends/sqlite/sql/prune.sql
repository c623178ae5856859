-- One bounded batch of retention for {table} (claimq_archive or claimq_dead, filled in by the
-- backend): rows of one queue (or of every queue but those with a policy of their own)
-- finished before :before, or older than the queue's :keep_rows newest. `upto`, the later of
-- the two limits, bounds the index range read (once nothing is left to delete, a batch reads
-- no younger row). A row of a workflow with a job still live or held stays; the workflows
-- of the rows deleted are returned (the backend then forgets those with no job left).
DELETE FROM {table} WHERE id IN (
    WITH beyond AS (
        SELECT t.finished_at, t.id FROM {table} t
        WHERE :keep_rows IS NOT NULL
          AND (:queue IS NULL OR t.queue = :queue)
          AND (:queue IS NOT NULL OR t.queue NOT IN (SELECT value FROM json_each(:skip)))
        ORDER BY t.finished_at DESC, t.id DESC
        LIMIT 1 OFFSET coalesce(:keep_rows, 0)
    ), upto AS (
        SELECT CASE WHEN :before IS NULL THEN (SELECT finished_at FROM beyond)
                    ELSE max(:before, coalesce((SELECT finished_at FROM beyond), :before))
               END AS at
    )
    SELECT t.id FROM {table} t
    WHERE t.finished_at <= (SELECT at FROM upto)
      AND (:queue IS NULL OR t.queue = :queue)
      AND (:queue IS NOT NULL OR t.queue NOT IN (SELECT value FROM json_each(:skip)))
      AND (t.finished_at < :before
           OR (t.finished_at, t.id) <= (SELECT b.finished_at, b.id FROM beyond b))
      AND {workflow_done}
    ORDER BY t.finished_at
    LIMIT :batch
)
RETURNING workflow_id

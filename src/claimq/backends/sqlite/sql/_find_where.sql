-- The filters find_jobs shares between tables (each adds its status or reason test).
(:before IS NULL OR id < :before)
AND (:queue IS NULL OR queue = :queue)
AND (:task IS NULL OR task = :task)
AND (:tag IS NULL OR EXISTS (
    SELECT 1 FROM json_each(CASE WHEN json_valid(tags) THEN tags ELSE '[]' END)
    WHERE value = :tag))
AND (:text IS NULL OR instr(lower(payload), :text) > 0 OR instr(lower(errors), :text) > 0)

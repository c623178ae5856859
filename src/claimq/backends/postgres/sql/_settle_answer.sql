-- At least one row: a claimed job per row (all NULL when none was claimed), and in the first
-- row only the completed ids (in every row they made up half the answer's bytes).
-- backend.py reads the columns by position as _SETTLE_COLUMNS: keep the two in step.
SELECT CASE WHEN coalesce(c.nth, 1) = 1 THEN (SELECT array_agg(id) FROM archived) END
           AS completed,
       c.*
-- (`wf`: the completions' workflow release runs; nothing to count without a workflow job)
FROM (SELECT count(*) AS wf FROM wf_released) AS one
LEFT JOIN (SELECT claimed.*, row_number() OVER () AS nth FROM claimed) c ON true

-- A finished row `t` that retention may delete: outside every workflow, or of a workflow with
-- no job left in jobs or held (a dependent may still read its result).
(t.workflow_id IS NULL
 OR (NOT EXISTS (SELECT 1 FROM claimq_jobs j WHERE j.workflow_id = t.workflow_id)
     AND NOT EXISTS (SELECT 1 FROM claimq_held h WHERE h.workflow_id = t.workflow_id)))

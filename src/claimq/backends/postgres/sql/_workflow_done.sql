-- A finished job `t` whose workflow (if any) has no live job left (in jobs or held): retention
-- and purge may delete it (a dependent still waiting reads its dependencies' results).
(t.workflow_id IS NULL
 OR (NOT EXISTS (SELECT 1 FROM {schema}.jobs j WHERE j.workflow_id = t.workflow_id)
     AND NOT EXISTS (SELECT 1 FROM {schema}.held h WHERE h.workflow_id = t.workflow_id)))

-- After a delete of finished jobs (`deleted`: their id and workflow_id): the workflows of
-- those jobs that have no job left anywhere lose their row and their edges.
wf_finished AS (
    SELECT w.id FROM {schema}.workflows w
    WHERE w.id IN (SELECT workflow_id FROM deleted WHERE workflow_id IS NOT NULL)
      AND NOT EXISTS (SELECT 1 FROM {schema}.jobs j WHERE j.workflow_id = w.id)
      AND NOT EXISTS (SELECT 1 FROM {schema}.held h WHERE h.workflow_id = w.id)
      AND NOT EXISTS (SELECT 1 FROM {schema}.archive a
                      WHERE a.workflow_id = w.id AND a.id NOT IN (SELECT id FROM deleted))
      AND NOT EXISTS (SELECT 1 FROM {schema}.dead x
                      WHERE x.workflow_id = w.id AND x.id NOT IN (SELECT id FROM deleted))
    FOR UPDATE OF w
), wf_rows_gone AS (
    DELETE FROM {schema}.workflows w WHERE w.id IN (SELECT id FROM wf_finished)
), wf_edges_gone AS (
    DELETE FROM {schema}.deps d WHERE d.workflow_id IN (SELECT id FROM wf_finished)
)

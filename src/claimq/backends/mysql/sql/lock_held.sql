-- Held rows a write is about to move (cancel, or a burial by the release rule), locked, with
-- their histories, by id. A row being moved by another transaction is waited for, then gone.
SELECT id, errors, workflow_id FROM claimq_held WHERE id IN %(ids)s ORDER BY id FOR UPDATE

-- A dead letter's idempotency key and the job its key row points at (resurrect): `holder`
-- NULL when the key has no row, `holds` whether that job holds it (_key_held.sql: :statuses
-- every live status, :since the start of the retention window), and its workflow. No row: no
-- such dead letter.
SELECT d.idempotency_key, k.job_id AS holder, {key_held} AS holds, d.workflow_id
FROM claimq_dead d
LEFT JOIN claimq_idempotency k ON k.key = d.idempotency_key
WHERE d.id = :id

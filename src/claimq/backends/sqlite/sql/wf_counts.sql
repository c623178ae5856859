-- A workflow's jobs by status, and its last finish (read only when nothing is live).
SELECT status, count(*), max(finished_at) FROM (
    SELECT status, NULL AS finished_at FROM claimq_jobs WHERE workflow_id = :id
    UNION ALL SELECT 'held', NULL FROM claimq_held WHERE workflow_id = :id
    UNION ALL SELECT 'succeeded', finished_at FROM claimq_archive WHERE workflow_id = :id
    UNION ALL SELECT 'dead', finished_at FROM claimq_dead WHERE workflow_id = :id
)
GROUP BY status

-- Every job of a workflow wherever it is, by id.
SELECT id FROM claimq_jobs WHERE workflow_id = %(workflow_id)s
UNION ALL SELECT id FROM claimq_held WHERE workflow_id = %(workflow_id)s
UNION ALL SELECT id FROM claimq_archive WHERE workflow_id = %(workflow_id)s
UNION ALL SELECT id FROM claimq_dead WHERE workflow_id = %(workflow_id)s
ORDER BY id

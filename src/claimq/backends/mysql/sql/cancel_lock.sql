SELECT id, status, errors, workflow_id FROM claimq_jobs WHERE id = %(id)s FOR UPDATE

-- How many jobs of these workflows are in each status, and the latest end of the finished ones.
SELECT workflow_id, status, count(*) AS n, max(finished_at) AS finished_at
FROM (SELECT workflow_id, status, NULL AS finished_at FROM claimq_jobs
      WHERE workflow_id IN %(ids)s
      UNION ALL
      SELECT workflow_id, 'held', NULL FROM claimq_held WHERE workflow_id IN %(ids)s
      UNION ALL
      SELECT workflow_id, 'succeeded', finished_at FROM claimq_archive
      WHERE workflow_id IN %(ids)s
      UNION ALL
      SELECT workflow_id, 'dead', finished_at FROM claimq_dead WHERE workflow_id IN %(ids)s
     ) AS w
GROUP BY workflow_id, status

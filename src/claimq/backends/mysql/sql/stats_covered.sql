-- Whether anything finished before the window: then the window is measured in full (else the
-- rates cover the time since the first job that finished within it was created).
SELECT EXISTS (SELECT 1 FROM claimq_archive WHERE finished_at < %(since)s)
    OR EXISTS (SELECT 1 FROM claimq_dead WHERE finished_at < %(since)s) AS covered

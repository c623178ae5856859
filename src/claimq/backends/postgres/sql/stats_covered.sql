-- Whether anything finished before the window: then the window is measured in full (else the
-- rates cover the time since the first job that finished within it was created).
SELECT EXISTS (SELECT 1 FROM {schema}.archive
               WHERE finished_at < {now} - make_interval(secs => %(window)s))
    OR EXISTS (SELECT 1 FROM {schema}.dead
               WHERE finished_at < {now} - make_interval(secs => %(window)s)) AS covered

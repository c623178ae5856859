-- A worker: runs jobs (and, from its handlers, enqueues more); cannot purge finished jobs,
-- resurrect dead letters or write the audit table.
{read_grants}
{enqueue_grants}
{work_grants}

-- A producer: enqueues jobs and reads them; cannot claim, settle or delete one.
{read_grants}
{enqueue_grants}

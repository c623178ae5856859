-- One row of insert_jobs.sql (its columns' order): the caller repeats it per job.
(%s, %s, %s, %s, %s, %s, %s, coalesce(%s, TIMESTAMPADD(MICROSECOND, %s, {now_positional})),
 {now_positional}, {now_positional}, %s, %s, %s)

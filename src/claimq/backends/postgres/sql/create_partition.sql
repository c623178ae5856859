-- One day of the partitioned archive (maintain_partitions: a few days ahead of today).
CREATE TABLE IF NOT EXISTS {schema}.{name} PARTITION OF {schema}.archive
    FOR VALUES FROM ('{lower}') TO ('{upper}')

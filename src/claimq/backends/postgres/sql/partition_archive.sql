-- Turns the archive into a table partitioned by finished_at (run once, by an operator: it
-- locks the archive for as long as the old rows take to check and index). The old table
-- becomes the partition of everything before {bound} (midnight after today and after its
-- latest row); days from {bound} on get partitions of their own (maintain_partitions), and a
-- default partition catches any row no day holds.
LOCK TABLE {schema}.archive IN ACCESS EXCLUSIVE MODE;
DROP TRIGGER archive_notify_finished ON {schema}.archive;
DROP TRIGGER archive_key_finished ON {schema}.archive;
ALTER TABLE {schema}.archive RENAME TO archive_before;
-- the partitioned table's key is (id, finished_at): attaching the old table builds it there
ALTER TABLE {schema}.archive_before DROP CONSTRAINT archive_pkey;
ALTER INDEX {schema}.archive_finished RENAME TO archive_before_finished;
ALTER INDEX {schema}.archive_workflow RENAME TO archive_before_workflow;
CREATE TABLE {schema}.archive (LIKE {schema}.archive_before INCLUDING DEFAULTS)
    PARTITION BY RANGE (finished_at);
ALTER TABLE {schema}.archive ADD PRIMARY KEY (id, finished_at);
CREATE INDEX archive_finished ON {schema}.archive (finished_at);
-- workflows (migration 014): the column came with LIKE, its index is the parent's
CREATE INDEX archive_workflow ON {schema}.archive (workflow_id) WHERE workflow_id IS NOT NULL;
ALTER TABLE {schema}.archive ATTACH PARTITION {schema}.archive_before
    FOR VALUES FROM (MINVALUE) TO ('{bound}');
CREATE TABLE {schema}.archive_default PARTITION OF {schema}.archive DEFAULT;
CREATE TRIGGER archive_notify_finished AFTER INSERT ON {schema}.archive
    REFERENCING NEW TABLE AS finished
    FOR EACH STATEMENT EXECUTE FUNCTION {schema}.notify_finished();
CREATE TRIGGER archive_key_finished AFTER INSERT ON {schema}.archive
    REFERENCING NEW TABLE AS finished
    FOR EACH STATEMENT EXECUTE FUNCTION {schema}.key_finished();

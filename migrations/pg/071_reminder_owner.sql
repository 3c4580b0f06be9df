-- Several processes on one database (docs/cluster.md): a reminder's delivery record names the
-- process that claimed it (cluster_processes.id), so a claim left open is taken up only when its
-- process is no longer alive — never while the process that claimed it is still delivering it.
-- NULL: claimed by a process outside a cluster (before this migration, or without the daemon's
-- membership): taken up as a kill's, as before.
ALTER TABLE reminder_deliveries ADD COLUMN owner text;

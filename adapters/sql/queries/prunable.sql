-- Whether retention has anything to delete now (what prune_finished and prune_idempotency
-- would take): a read, so that an idle runner's round takes no lease and writes nothing. A
-- status whose cutoff is NULL is kept for good. One row a question, read by the indexes the
-- deletes use.
SELECT EXISTS (
    SELECT 1 FROM jobs
    WHERE status IN ('succeeded', 'failed') AND status = 'succeeded'
      AND finished_at < :succeeded_cutoff
      AND (unique_key IS NULL OR unique_while_active OR key_until <= :now)
)
UNION ALL
SELECT EXISTS (
    SELECT 1 FROM jobs
    WHERE status IN ('succeeded', 'failed') AND status = 'failed'
      AND finished_at < :failed_cutoff
      AND (unique_key IS NULL OR unique_while_active OR key_until <= :now)
)
UNION ALL
SELECT EXISTS (SELECT 1 FROM jobtable_idempotency WHERE created_at < :answered_before)

-- The console's dead-letter actions (replay, purge) are recorded in the audit log like
-- every other change an operator makes: the action list of 0008 gains them. NOT VALID:
-- every existing row passed the narrower list, and checking them again would scan the
-- whole audit log under this statement's exclusive lock; new rows are checked.
ALTER TABLE audit_log DROP CONSTRAINT audit_log_action_check;
ALTER TABLE audit_log ADD CONSTRAINT audit_log_action_check CHECK (action IN ('create', 'confirm', 'update',
    'supersede', 'pending', 'promote', 'correct', 'deprecate', 'rollback', 'expire', 'archive', 'restore', 'decay',
    'consolidate', 'delete', 'delete_user', 'export', 'import', 'turn_store', 'turn_purge', 'rebuild',
    'dlq_replay', 'dlq_purge')) NOT VALID;

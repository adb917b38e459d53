package migrations

// New is newMigrator for the external tests, which read migrations from their own
// file systems.
var New = newMigrator

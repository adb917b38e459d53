package migrations

// New is newMigrator for the external tests, which read migrations from their own
// file systems.
var New = newMigrator

// Migrations lists the migrations in order.
func (m *Migrator) Migrations() []Migration { return append([]Migration(nil), m.migrations...) }

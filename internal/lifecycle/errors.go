package lifecycle

// ErrConflict is returned when a concurrent change got in the way of an operation
// (a rollback whose target version changed meanwhile); retrying may succeed.
var ErrConflict = errConflict

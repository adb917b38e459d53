package streams

// Names the external tests (package streams_test) use; the package itself keeps them
// unexported because nothing else needs them.

const (
	DefaultTurnsMaxAge     = defaultTurnsMaxAge
	DefaultCandidateMaxAge = defaultCandidateMaxAge
	DefaultDuplicateWindow = defaultDuplicateWindow
)

var (
	ReplayMsgID       = replayMsgID
	TenantFromSubject = tenantFromSubject
)

// DLQSubject is the subject dead letters of a stage for a tenant go to:
// engram.dlq.<stage>.<tenant> (the DLQ builds it from tokens it has already encoded).
func DLQSubject(stage, tenant string) (string, error) {
	return twoTokenSubject(DLQSubjectPrefix, "stage", stage, "tenant", tenant)
}

// Config returns the worker's configuration with defaults applied.
func (w *Worker) Config() WorkerConfig { return w.cfg }

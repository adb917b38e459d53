package httpapi

// Exported names of the request and response bodies the handlers define, for the
// tests that pin the Go SDK's types (client/) to the server's.
type (
	CorrectRequest   = correctBody
	DeprecateRequest = deprecateBody
	RollbackRequest  = rollbackBody
	MemoryResponse   = memoryResponse
	HistoryResponse  = historyResponse
	AsOfResponse     = asOfResponse
	ListResponse     = listResponse
)

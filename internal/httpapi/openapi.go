package httpapi

import (
	_ "embed"
	"net/http"
)

// openAPIDocument is the OpenAPI 3.1 description of every route in routes.go. It is
// generated from the request and response types by TestOpenAPIDocument (go test
// ./internal/httpapi -run TestOpenAPIDocument -update), with examples recorded from
// real calls, and checked against the routing table.
//
//go:embed openapi.json
var openAPIDocument []byte

// serveOpenAPI answers GET /openapi.json.
func (e *edge) serveOpenAPI(w http.ResponseWriter, _ *http.Request, _ Principal) error {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, err := w.Write(openAPIDocument)
	return err
}

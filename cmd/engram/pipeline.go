package main

import (
	"context"
	"fmt"
	"net/http"

	"github.com/engramhq/engram/extractor/redact"
	"github.com/engramhq/engram/ingest"
)

// pipeline wires engram's components for one process: the HTTP APIs and the
// workers, all sharing the App's connections.
type pipeline struct {
	app      *App
	redactor *redact.Redactor
	ingest   *ingest.API
}

func newPipeline(_ context.Context, app *App) (*pipeline, error) {
	r, err := redact.New(redact.Config{})
	if err != nil {
		return nil, fmt.Errorf("building the redactor: %w", err)
	}
	in, err := ingest.NewAPI(ingest.APIConfig{Limits: ingest.DefaultLimits(), Redactor: r, Publisher: app.JS, Logger: app.Logger})
	if err != nil {
		return nil, err
	}
	return &pipeline{app: app, redactor: r, ingest: in}, nil
}

func (p *pipeline) workers() []func(context.Context) error { return nil }

func (p *pipeline) register(mux *http.ServeMux) {
	p.ingest.Register(mux)
}

func (p *pipeline) runExtractor(ctx context.Context) error { <-ctx.Done(); return nil }

func (p *pipeline) runResolver(ctx context.Context) error { <-ctx.Done(); return nil }

func (p *pipeline) close() {}

// Package bench holds engram's benchmarks, run by "engram bench ingest|resolve|search":
// ingest throughput through POST /v1/turns against raw JetStream publishing, resolver
// throughput over owners that already hold memories, and search latency and recall at
// scale. They use the production packages' exported APIs only; bulk seeding and the
// other SQL they need are memory methods (memory/bulk.go).
package bench

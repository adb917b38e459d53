package streams

import "log/slog"

// LogValue logs the counters as fields (delivered=…), not as a Go struct.
func (s Stats) LogValue() slog.Value {
	return slog.GroupValue(
		slog.Int64("delivered", s.Delivered), slog.Int64("acked", s.Acked), slog.Int64("nacked", s.Nacked),
		slog.Int64("dead_lettered", s.DeadLettered), slog.Int64("poison", s.Poison),
		slog.Int64("panics", s.Panics), slog.Int64("ack_errors", s.AckErrors), slog.Int64("parked", s.Parked))
}

package natsserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/gofrs/flock"
)

// A store is served by one process at a time: two JetStream servers on the same
// directory corrupt each other's state ("Stream state outdated … will rebuild").
// The process that starts a server holds an exclusive lock on lockFile in the store
// directory for as long as the server runs, and records in ownerFile where the
// server listens, so that other commands join that server instead of opening the
// store themselves.
const (
	lockFile  = "server.lock"
	ownerFile = "server.json"
)

// Owner is what the process serving a store records beside it.
type Owner struct {
	PID     int       `json:"pid"`
	URL     string    `json:"url"`
	Command string    `json:"command,omitempty"`
	Started time.Time `json:"started"`
}

func (o Owner) describe() string {
	s := fmt.Sprintf("process %d", o.PID)
	if o.Command != "" {
		s += fmt.Sprintf(" (%s)", o.Command)
	}
	if o.URL != "" {
		s += ", NATS at " + o.URL
	}
	return s
}

// LockedError says that another process holds the store: Start refuses to open it.
type LockedError struct {
	StoreDir string
	// Owner is the holder's record; PID is 0 while the holder is still starting.
	Owner Owner
}

func (e *LockedError) Error() string {
	who := "another process (still starting)"
	if e.Owner.PID != 0 {
		who = e.Owner.describe()
	}
	return fmt.Sprintf("the JetStream store %s is in use by %s: only one server may open it", e.StoreDir, who)
}

// storeLock is the held lock of a store and the record written beside it.
type storeLock struct {
	fl  *flock.Flock
	dir string
}

// lockStore takes the store's lock without waiting. A held lock is a *LockedError.
func lockStore(dir string) (*storeLock, error) {
	fl := flock.New(filepath.Join(dir, lockFile), flock.SetPermissions(0o600))
	ok, err := fl.TryLock()
	if err != nil {
		return nil, fmt.Errorf("locking the JetStream store %s: %w", dir, err)
	}
	if !ok {
		o, _ := readOwner(dir)
		return nil, &LockedError{StoreDir: dir, Owner: o}
	}
	// A record left by a process that crashed names a server that is gone.
	if err := os.Remove(filepath.Join(dir, ownerFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		_ = fl.Unlock()
		return nil, fmt.Errorf("removing the stale server record of %s: %w", dir, err)
	}
	return &storeLock{fl: fl, dir: dir}, nil
}

// record writes the owner record atomically (a reader never sees half of it).
func (l *storeLock) record(o Owner) error {
	b, err := json.Marshal(o)
	if err != nil {
		return fmt.Errorf("encoding the server record: %w", err)
	}
	tmp := filepath.Join(l.dir, ownerFile+".tmp")
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return fmt.Errorf("writing the server record: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(l.dir, ownerFile)); err != nil {
		return fmt.Errorf("writing the server record: %w", err)
	}
	return nil
}

// release removes the record, then the lock: a reader that still sees the lock
// held finds no record and waits, rather than joining a server that is stopping.
func (l *storeLock) release() {
	_ = os.Remove(filepath.Join(l.dir, ownerFile))
	_ = l.fl.Unlock()
}

func readOwner(dir string) (Owner, error) {
	var o Owner
	b, err := os.ReadFile(filepath.Join(dir, ownerFile))
	if err != nil {
		return o, err
	}
	if err := json.Unmarshal(b, &o); err != nil {
		return Owner{}, fmt.Errorf("reading the server record of %s: %w", dir, err)
	}
	return o, nil
}

// Running reports the server of the process that holds storeDir, waiting (until
// ctx ends) while that process is still starting. ok is false when no process
// holds the store: the caller may start a server on it.
func Running(ctx context.Context, storeDir string) (o Owner, ok bool, err error) {
	for {
		o, held, err := probe(storeDir)
		if err != nil || !held {
			return Owner{}, false, err
		}
		if o.URL != "" && alive(o.PID) {
			return o, true, nil
		}
		select {
		case <-ctx.Done():
			return Owner{}, false, fmt.Errorf("waiting for the server of %s to start: %w", storeDir, ctx.Err())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// probe says whether a process holds the store's lock, and what it recorded.
func probe(dir string) (Owner, bool, error) {
	if _, err := os.Stat(filepath.Join(dir, lockFile)); errors.Is(err, os.ErrNotExist) {
		return Owner{}, false, nil // no server ever ran here
	}
	fl := flock.New(filepath.Join(dir, lockFile))
	ok, err := fl.TryRLock()
	if err != nil {
		return Owner{}, false, fmt.Errorf("checking the lock of the JetStream store %s: %w", dir, err)
	}
	if ok {
		_ = fl.Unlock()
		return Owner{}, false, nil
	}
	o, _ := readOwner(dir) // absent or partial while the holder starts: the caller waits
	return o, true, nil
}

// alive reports whether a process with that pid exists: a record whose process is
// gone is one the new holder has not yet removed.
func alive(pid int) bool {
	if pid <= 0 {
		return false
	}
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	err = p.Signal(syscall.Signal(0))
	return err == nil || errors.Is(err, syscall.EPERM)
}

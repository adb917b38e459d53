// Package scripts finds and runs scripts/services.sh, which installs and starts the
// project-local PostgreSQL. The binary's embedded default and the test harness both
// start that cluster on demand when nothing answers.
package scripts

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
)

// servicesScript walks up from the working directory (the checkout, or a package
// directory under go test) to scripts/services.sh.
func servicesScript() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding scripts/services.sh: %w", err)
	}
	for {
		p := filepath.Join(dir, "scripts", "services.sh")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("scripts/services.sh was not found above the working directory")
		}
		dir = parent
	}
}

// StartPostgres runs `services.sh start` for the cluster on port, writing the
// script's progress to out.
func StartPostgres(ctx context.Context, port int, out io.Writer) error {
	script, err := servicesScript()
	if err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "bash", script, "start")
	cmd.Env = append(os.Environ(), "ENGRAM_PG_PORT="+strconv.Itoa(port))
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("starting the local PostgreSQL with %s: %w", script, err)
	}
	return nil
}

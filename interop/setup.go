package interop

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
)

// MinNodeMajor is the oldest Node.js major version the JS peer runs on.
const MinNodeMajor = 20

// ErrNodeMissing is wrapped by errors about a missing or too old Node.js or npm: the one
// condition under which callers may skip interop work instead of failing.
var ErrNodeMissing = errors.New("Node.js and npm are required")

// DefaultDir is the JS peer's folder in the source tree (interop/js), found from this file's
// path; it is empty when the binary was built without the sources next to it.
func DefaultDir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return ""
	}
	return filepath.Join(filepath.Dir(file), "js")
}

// CheckNode reports whether node (≥ MinNodeMajor) and npm are on PATH; the error wraps
// ErrNodeMissing and says what was found.
func CheckNode() error {
	node, err := exec.LookPath("node")
	if err != nil {
		return fmt.Errorf("%w: node is not on PATH (install Node.js ≥ %d and npm; interop/js/setup.sh says how)",
			ErrNodeMissing, MinNodeMajor)
	}
	out, err := exec.Command(node, "--version").Output()
	if err != nil {
		return fmt.Errorf("%w: %s --version: %v", ErrNodeMissing, node, err)
	}
	version := strings.TrimSpace(string(out))
	major, err := nodeMajor(version)
	if err != nil {
		return fmt.Errorf("%w: %s --version printed %q", ErrNodeMissing, node, version)
	}
	if major < MinNodeMajor {
		return fmt.Errorf("%w: %s is Node.js %s, want ≥ %d", ErrNodeMissing, node, version, MinNodeMajor)
	}
	if _, err := exec.LookPath("npm"); err != nil {
		return fmt.Errorf("%w: npm is not on PATH (Node.js %s found at %s)", ErrNodeMissing, version, node)
	}
	return nil
}

// nodeMajor parses the major version of `node --version` output ("v20.20.2").
func nodeMajor(version string) (int, error) {
	v, ok := strings.CutPrefix(version, "v")
	if !ok {
		return 0, fmt.Errorf("version %q: want v<major>.<minor>.<patch>", version)
	}
	major, _, _ := strings.Cut(v, ".")
	n, err := strconv.Atoi(major)
	if err != nil {
		return 0, fmt.Errorf("version %q: want v<major>.<minor>.<patch>", version)
	}
	return n, nil
}

// setupMu serializes Setup within the process: two `npm ci` in one folder would delete each
// other's node_modules.
var setupMu sync.Mutex

// Setup checks Node.js and installs the JS peer's dependencies in dir with `npm ci` (exactly
// the versions of package-lock.json) when node_modules is missing or older than the lockfile.
func Setup(dir string) error {
	if err := CheckNode(); err != nil {
		return err
	}
	setupMu.Lock()
	defer setupMu.Unlock()
	current, err := modulesCurrent(dir)
	if err != nil || current {
		return err
	}
	cmd := exec.Command("npm", "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("npm ci in %s: %w\n%s", dir, err, out.Bytes())
	}
	return nil
}

// modulesCurrent reports whether dir/node_modules was installed from the current lockfile:
// npm writes node_modules/.package-lock.json on every install, so it is at least as new as
// package-lock.json unless the lockfile changed since.
func modulesCurrent(dir string) (bool, error) {
	lock, err := os.Stat(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		return false, fmt.Errorf("JS peer folder %q: %w", dir, err)
	}
	installed, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json"))
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return !installed.ModTime().Before(lock.ModTime()), nil
}

// Package cluster runs a streamsim plan's instances as pods on a Kubernetes cluster: one
// Indexed Job per composition group (one pod per instance), the Testground sync service as a
// Deployment and Service, and the Testground run environment each instance reads. It writes
// the manifests of one run, applies them with kubectl, waits with progress, names every pod
// that failed with its logs' last lines, collects the outputs into the layout `streamsim
// report` reads (<out>/<group>/<instance>/), and deletes what it created.
//
// Two network modes: HostNetwork (pods share the node's network; every instance listens on
// 127.0.0.1 on a port of its own, the sync service on a loopback port: a one-node cluster on
// a machine that allows loopback traffic only) and pod networking (every pod listens on its
// pod IP, the sync service is reached through its Service: any real cluster).
package cluster

import (
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/streamsim/streamsim/sim/runner"
)

// Labels on every object of a run, to find and delete them.
const (
	LabelApp       = "app.kubernetes.io/name"
	LabelRun       = "streamsim.io/run"
	LabelGroup     = "streamsim.io/group"
	LabelComponent = "streamsim.io/component"
	AppName        = "streamsim"
	// ComponentInstance and ComponentSync are LabelComponent's values.
	ComponentInstance = "instance"
	ComponentSync     = "sync-service"
	// indexAnnotation is where the Job controller puts a pod's completion index.
	indexAnnotation = "batch.kubernetes.io/job-completion-index"
	// OutputsMount is where each instance pod sees its own outputs directory.
	OutputsMount = "/outputs"
)

// Group is one composition group: its instances run as one Indexed Job.
type Group struct {
	ID        string
	Instances int
	// Params override the run's Params for this group.
	Params map[string]string
	// Resources of each of the group's pods; zero fields take the run's defaults.
	Resources Resources
}

// Resources are one pod's CPU request and memory request and limit (Kubernetes quantities:
// "250m", "1", "256Mi"). No CPU limit: throttling a node would move gossip timing, which is a
// result; the request is what the scheduler packs by.
type Resources struct {
	CPU         string
	Memory      string
	MemoryLimit string
}

// Run is one run of a plan on a cluster.
type Run struct {
	// Name is the composition's name (metadata.name), for labels and messages.
	Name string
	// ID is the run's id (TEST_RUN and part of every object's name): lower-case letters,
	// digits and '-', at most 20 characters.
	ID       string
	Plan     string
	Case     string
	Params   map[string]string
	Groups   []Group
	Defaults Resources

	Namespace string
	// Image is the plan image (a static binary at /plan); SyncImage the sync service's.
	Image, SyncImage string
	// PullPolicy of both images: Never for images loaded into the node's runtime,
	// IfNotPresent or Always for a registry.
	PullPolicy string
	// HostNetwork: see the package comment. SyncPort is the sync service's port (on
	// loopback with HostNetwork, of its Service otherwise).
	HostNetwork bool
	SyncPort    int
	// OutputsHostPath, when set, is a directory on the node (one node, or a shared mount on
	// every node) that holds the run's outputs: <path>/<group>/<instance>/. Otherwise
	// OutputsClaim names a ReadWriteMany PersistentVolumeClaim mounted the same way.
	OutputsHostPath string
	OutputsClaim    string
	// Deadline bounds the whole run, from apply to the last pod's end.
	Deadline time.Duration
	// Started is TEST_START_TIME.
	Started time.Time
}

var (
	idPattern    = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?$`)
	groupPattern = regexp.MustCompile(`^[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?$`)
)

// DefaultResources are the pod resources when neither a group nor a flag names them: what a
// mesh node of a few dozen used at 4× on two cores (docs/kubernetes.md has the measurements).
var DefaultResources = Resources{CPU: "50m", Memory: "128Mi", MemoryLimit: "1Gi"}

// Validate checks the run before anything reaches the cluster: the scenario is registered,
// every group's parameters parse and pass the scenario's checks (as `streamsim run` does),
// names fit Kubernetes, and the resources are quantities.
func (r *Run) Validate() error {
	if !idPattern.MatchString(r.ID) || len(r.ID) > 20 {
		return fmt.Errorf("run id %q: want lower-case letters, digits and '-', at most 20 characters", r.ID)
	}
	if r.Namespace == "" || !idPattern.MatchString(r.Namespace) || len(r.Namespace) > 63 {
		return fmt.Errorf("namespace %q: want a DNS label (lower-case letters, digits, '-')", r.Namespace)
	}
	if r.Image == "" || r.SyncImage == "" {
		return errors.New("image and sync image must be set")
	}
	switch r.PullPolicy {
	case "Never", "IfNotPresent", "Always":
	default:
		return fmt.Errorf("pull policy %q: want Never, IfNotPresent or Always", r.PullPolicy)
	}
	if r.SyncPort < 1 || r.SyncPort > 65535 {
		return fmt.Errorf("sync port %d: want 1..65535", r.SyncPort)
	}
	if (r.OutputsHostPath == "") == (r.OutputsClaim == "") {
		return errors.New("outputs: set exactly one of a host path and a persistent volume claim")
	}
	if r.OutputsHostPath != "" && !strings.HasPrefix(r.OutputsHostPath, "/") {
		return fmt.Errorf("outputs host path %q is not absolute", r.OutputsHostPath)
	}
	if r.Deadline <= 0 {
		return fmt.Errorf("deadline %v: must be positive", r.Deadline)
	}
	if len(r.Groups) == 0 {
		return errors.New("no groups")
	}
	sc, err := runner.Lookup(r.Case)
	if err != nil {
		return fmt.Errorf("case: %w", err)
	}
	sizes := map[string]int{}
	total := 0
	names := map[string]string{}
	for _, g := range r.Groups {
		if !groupPattern.MatchString(g.ID) {
			return fmt.Errorf("group id %q: want letters, digits, '.', '_' and '-'", g.ID)
		}
		if _, dup := sizes[g.ID]; dup {
			return fmt.Errorf("group %s appears twice", g.ID)
		}
		if g.Instances < 1 {
			return fmt.Errorf("group %s: %d instances (at least 1)", g.ID, g.Instances)
		}
		if other, clash := names[r.JobName(g.ID)]; clash {
			return fmt.Errorf("groups %s and %s give the same job name %s", other, g.ID, r.JobName(g.ID))
		}
		names[r.JobName(g.ID)] = g.ID
		sizes[g.ID] = g.Instances
		total += g.Instances
		res := r.resources(g)
		for _, q := range []struct{ name, v string }{{"cpu", res.CPU}, {"memory", res.Memory}, {"memory limit", res.MemoryLimit}} {
			if _, err := ParseQuantity(q.v); err != nil {
				return fmt.Errorf("group %s: %s: %w", g.ID, q.name, err)
			}
		}
	}
	if total < sc.MinInstances || total > sc.MaxInstances {
		return fmt.Errorf("%s needs %d..%d instances, the groups have %d", sc.Name, sc.MinInstances, sc.MaxInstances, total)
	}
	for _, g := range r.Groups {
		m := r.instanceParams(g)
		for k, v := range m {
			// The SDK packs params as k=v|k=v and silently drops values holding either.
			if strings.ContainsAny(v, "|=") || strings.ContainsAny(k, "|=") {
				return fmt.Errorf("group %s: param %s=%q: Testground's run environment cannot carry '|' or '=' in a parameter", g.ID, k, v)
			}
		}
		p, err := sc.ParseParams(m)
		if err == nil && sc.Check != nil {
			err = sc.Check(p, map[string]int{g.ID: g.Instances})
		}
		if err == nil {
			err = runner.CheckFaultTargets(p.Faults, sizes)
		}
		if err == nil {
			err = runner.CheckProcessClock(p)
		}
		if err != nil {
			return fmt.Errorf("group %s: %w", g.ID, err)
		}
	}
	return nil
}

// Instances is the run's instance count.
func (r *Run) Instances() int {
	n := 0
	for _, g := range r.Groups {
		n += g.Instances
	}
	return n
}

// instanceParams are a group's parameters: the run's, overridden by the group's.
func (r *Run) instanceParams(g Group) map[string]string {
	m := map[string]string{}
	for k, v := range r.Params {
		m[k] = v
	}
	for k, v := range g.Params {
		m[k] = v
	}
	return m
}

// packParams is TEST_INSTANCE_PARAMS: k=v joined by '|', sorted so manifests are stable.
func packParams(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = k + "=" + m[k]
	}
	return strings.Join(parts, "|")
}

func (r *Run) resources(g Group) Resources {
	res := g.Resources
	d := r.Defaults
	if d == (Resources{}) {
		d = DefaultResources
	}
	if res.CPU == "" {
		res.CPU = d.CPU
	}
	if res.Memory == "" {
		res.Memory = d.Memory
	}
	if res.MemoryLimit == "" {
		res.MemoryLimit = d.MemoryLimit
		if lim, err1 := ParseQuantity(res.MemoryLimit); err1 == nil {
			if req, err2 := ParseQuantity(res.Memory); err2 == nil && req > lim {
				res.MemoryLimit = res.Memory
			}
		}
	}
	return res
}

// JobName is the name of group's Job: "ss-<run>-<group>" made a DNS label of at most 63
// characters (the Job controller puts it in a label of its pods).
func (r *Run) JobName(group string) string {
	g := strings.ToLower(group)
	g = strings.Map(func(c rune) rune {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' {
			return c
		}
		return '-'
	}, g)
	name := "ss-" + r.ID + "-" + g
	if len(name) > 63 {
		name = name[:63]
	}
	return strings.TrimRight(name, "-")
}

// SyncName is the sync service's Deployment and Service name.
func (r *Run) SyncName() string { return "ss-" + r.ID + "-sync" }

// Selector selects every object of the run.
func (r *Run) Selector() string { return LabelRun + "=" + r.ID }

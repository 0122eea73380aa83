package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/streamsim/streamsim/result"
)

// Options tune how Execute waits and reports.
type Options struct {
	// Out is the local directory the outputs are collected into (<Out>/<group>/<instance>/).
	// With Run.OutputsHostPath it is that same directory (the runner runs on the node).
	Out string
	// Progress receives progress lines and the failure report; nil: discarded.
	Progress io.Writer
	// Poll is the period of status polls and resource samples (default 2 s).
	Poll time.Duration
	// Unschedulable is how long a pod may stay unschedulable before the run is abandoned
	// (default 30 s).
	Unschedulable time.Duration
	// LogTail is how many log lines a failed pod's report carries (default 20).
	LogTail int
	// Keep leaves the run's objects on the cluster (for debugging).
	Keep bool
}

// PodResult is one instance pod's outcome.
type PodResult struct {
	Name     string `json:"name"`
	Group    string `json:"group"`
	Index    int    `json:"index"`
	Node     string `json:"node,omitempty"`
	Phase    string `json:"phase"`
	Reason   string `json:"reason,omitempty"`
	Message  string `json:"message,omitempty"`
	ExitCode *int   `json:"exit_code,omitempty"`
	// Outcome is what the instance recorded (the Testground SDK's success, failure or crash
	// event in its log): the process exits 0 after a failure, so the phase alone does not tell.
	Outcome string `json:"outcome"`
	// CPUSeconds and PeakMemoryBytes are from the kubelet's summary, sampled every poll
	// (CPU: the last sample before the pod ended; memory: the largest working set seen).
	CPUSeconds      float64  `json:"cpu_seconds,omitempty"`
	PeakMemoryBytes uint64   `json:"peak_memory_bytes,omitempty"`
	LogTail         []string `json:"log_tail,omitempty"`
}

// Failed tells whether the pod or its instance did not succeed.
func (p PodResult) Failed() bool { return p.Phase != "Succeeded" || p.Outcome != OutcomeSuccess }

// Instance outcomes, as the SDK's events name them; OutcomeNone: no event in the log.
const (
	OutcomeSuccess = "success"
	OutcomeFailure = "failure"
	OutcomeCrash   = "crash"
	OutcomeNone    = "none"
)

// instanceOutcome reads the last outcome event of an instance's log (its stdout, or run.out):
// the SDK writes {"event":{"success_event":…}}, failure_event with "error", crash_event with
// "error" and "stacktrace".
func instanceOutcome(log string) (outcome, message string) {
	outcome = OutcomeNone
	for _, line := range strings.Split(log, "\n") {
		if !strings.Contains(line, "_event\"") || !strings.HasPrefix(strings.TrimSpace(line), "{") {
			continue
		}
		var l struct {
			Event struct {
				Success *struct{} `json:"success_event"`
				Failure *struct {
					Error string `json:"error"`
				} `json:"failure_event"`
				Crash *struct {
					Error string `json:"error"`
				} `json:"crash_event"`
			} `json:"event"`
		}
		if json.Unmarshal([]byte(line), &l) != nil {
			continue
		}
		switch e := l.Event; {
		case e.Success != nil:
			outcome, message = OutcomeSuccess, ""
		case e.Failure != nil:
			outcome, message = OutcomeFailure, e.Failure.Error
		case e.Crash != nil:
			outcome, message = OutcomeCrash, e.Crash.Error
		}
	}
	return outcome, message
}

// Outcome is what Execute observed.
type Outcome struct {
	RunID         string      `json:"run_id"`
	Case          string      `json:"case"`
	Server        string      `json:"server_version"`
	Instances     int         `json:"instances"`
	Pods          []PodResult `json:"pods"`
	SyncReady     float64     `json:"sync_ready_seconds"`
	AllRunning    float64     `json:"all_running_seconds,omitempty"` // from applying the Jobs
	Elapsed       float64     `json:"elapsed_seconds"`
	DeadlineHit   bool        `json:"deadline_exceeded,omitempty"`
	Abandoned     string      `json:"abandoned,omitempty"`
	StatsProblems string      `json:"stats_unavailable,omitempty"`
}

// Failed are the pods that did not succeed.
func (o *Outcome) Failed() []PodResult {
	var f []PodResult
	for _, p := range o.Pods {
		if p.Failed() {
			f = append(f, p)
		}
	}
	return f
}

// OutcomeFile is the outcome's name in the outputs directory.
const OutcomeFile = "k8s-run.json"

// PodLogFile is a pod's log (stdout and stderr as the runtime kept them) in its instance's
// outputs directory.
const PodLogFile = "pod.log"

// Execute runs r on the cluster behind api: checks the cluster can hold it, applies the sync
// service and waits for it, applies one Job per group, waits for every pod to end (or the
// deadline, or a failure that stops the run: an image that cannot be pulled, a pod that
// cannot be scheduled), collects logs and outcome into opts.Out, and deletes the run's
// objects. The error names every pod that did not succeed; the outputs of the others stay.
func Execute(ctx context.Context, api API, r *Run, opts Options) (*Outcome, error) {
	if err := r.Validate(); err != nil {
		return nil, err
	}
	if opts.Poll <= 0 {
		opts.Poll = 2 * time.Second
	}
	if opts.Unschedulable <= 0 {
		opts.Unschedulable = 30 * time.Second
	}
	if opts.LogTail <= 0 {
		opts.LogTail = 20
	}
	progress := opts.Progress
	if progress == nil {
		progress = io.Discard
	}
	if opts.Out == "" {
		return nil, errors.New("no outputs directory")
	}
	if err := checkOutputsEmpty(opts.Out); err != nil {
		return nil, err
	}
	start := time.Now()
	server, err := api.Check(ctx)
	if err != nil {
		return nil, err
	}
	if err := CheckCapacity(ctx, api, r); err != nil {
		return nil, err
	}
	if err := CheckImages(ctx, api, r, opts.Poll); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(opts.Out, 0o755); err != nil {
		return nil, fmt.Errorf("outputs: %w", err)
	}
	out := &Outcome{RunID: r.ID, Case: r.Case, Server: server, Instances: r.Instances()}
	fmt.Fprintf(progress, "cluster %s: run %s, %d pods (%s) in namespace %s\n", server, r.ID, r.Instances(), groupList(r), r.Namespace)

	ctx, cancel := context.WithTimeout(ctx, r.Deadline)
	defer cancel()
	// Whatever happens from here, the run's objects go (a background context: the run's own
	// may be done).
	defer func() {
		if opts.Keep {
			fmt.Fprintf(progress, "keeping the run's objects: kubectl delete job,deployment,service,pod -n %s -l %s\n", r.Namespace, r.Selector())
			return
		}
		if err := cleanup(api, r, opts.Poll); err != nil {
			fmt.Fprintf(progress, "cleanup: %v\n", err)
		}
	}()

	head, err := MarshalList(append([]Object{r.NamespaceObject()}, r.SyncObjects()...))
	if err != nil {
		return nil, err
	}
	if err := api.Apply(ctx, head); err != nil {
		return nil, fmt.Errorf("applying the sync service: %w", err)
	}
	if err := waitSync(ctx, api, r, opts); err != nil {
		return nil, err
	}
	out.SyncReady = time.Since(start).Seconds()
	var jobs []Object
	for _, g := range r.Groups {
		jobs = append(jobs, r.Job(g))
	}
	body, err := MarshalList(jobs)
	if err != nil {
		return nil, err
	}
	jobsApplied := time.Now()
	if err := api.Apply(ctx, body); err != nil {
		return nil, fmt.Errorf("applying the jobs: %w", err)
	}
	w := newWatch(r, out, progress)
	w.jobsApplied = jobsApplied
	waitErr := w.wait(ctx, api, opts)
	out.Elapsed = time.Since(start).Seconds()
	if errors.Is(waitErr, context.DeadlineExceeded) {
		out.DeadlineHit = true
	} else if waitErr != nil {
		out.Abandoned = waitErr.Error()
	}
	collect(api, r, out, w, opts)
	if err := writeOutcome(opts.Out, out); err != nil {
		return out, err
	}
	report(progress, out)
	return out, outcomeError(out, r)
}

func groupList(r *Run) string {
	parts := make([]string, len(r.Groups))
	for i, g := range r.Groups {
		parts[i] = fmt.Sprintf("%s×%d", g.ID, g.Instances)
	}
	return strings.Join(parts, ", ")
}

// checkOutputsEmpty refuses a directory that already holds a run's outputs: a report would
// mix two runs.
func checkOutputsEmpty(dir string) error {
	sums, err := result.FindSummaries(dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil // nothing readable there; MkdirAll reports a real problem
	}
	if len(sums) > 0 {
		return fmt.Errorf("outputs directory %s already holds a run (%d summaries): pass another -out or remove it", dir, len(sums))
	}
	return nil
}

// CheckCapacity fails when the cluster's schedulable nodes cannot hold every pod of the run
// at once (the instances meet at barriers: a run with one pod left pending never ends).
func CheckCapacity(ctx context.Context, api API, r *Run) error {
	nodes, err := api.Nodes(ctx)
	if err != nil {
		return fmt.Errorf("listing nodes: %w", err)
	}
	pods, err := api.AllPods(ctx)
	if err != nil {
		return fmt.Errorf("listing pods: %w", err)
	}
	type room struct{ cpu, mem, pods int64 }
	free := map[string]*room{}
	var names []string
	for _, n := range nodes {
		if !schedulable(n) {
			continue
		}
		cpu, _ := ParseQuantity(n.Status.Allocatable["cpu"])
		mem, _ := ParseQuantity(n.Status.Allocatable["memory"])
		np, _ := strconv.ParseInt(n.Status.Allocatable["pods"], 10, 64)
		free[n.Metadata.Name] = &room{cpu, mem, np}
		names = append(names, n.Metadata.Name)
	}
	if len(free) == 0 {
		return fmt.Errorf("the cluster has no Ready, schedulable node (%d nodes)", len(nodes))
	}
	for _, p := range pods {
		f := free[p.Spec.NodeName]
		if f == nil || p.Status.Phase == "Succeeded" || p.Status.Phase == "Failed" {
			continue
		}
		f.pods--
		for _, c := range p.Spec.Containers {
			cpu, _ := ParseQuantity(c.Resources.Requests["cpu"])
			mem, _ := ParseQuantity(c.Resources.Requests["memory"])
			f.cpu -= cpu
			f.mem -= mem
		}
	}
	sort.Strings(names)
	// Pack the pods, largest requests first, onto the nodes, first fit: enough to tell a
	// run that cannot fit from one that can on the clusters this is for.
	type want struct {
		group    string
		cpu, mem int64
	}
	var wants []want
	syncRes := r.SyncObjects()[0].Spec.(DeploymentSpec).Template.Spec.Containers[0].Resources.Requests
	scpu, _ := ParseQuantity(syncRes["cpu"])
	smem, _ := ParseQuantity(syncRes["memory"])
	wants = append(wants, want{"sync service", scpu, smem})
	var needCPU, needMem int64
	for _, g := range r.Groups {
		res := r.resources(g)
		cpu, _ := ParseQuantity(res.CPU)
		mem, _ := ParseQuantity(res.Memory)
		for range g.Instances {
			wants = append(wants, want{g.ID, cpu, mem})
		}
	}
	for _, w := range wants {
		needCPU += w.cpu
		needMem += w.mem
	}
	sort.SliceStable(wants, func(i, j int) bool { return wants[i].cpu > wants[j].cpu })
	var totCPU, totMem, totPods int64
	for _, n := range names {
		totCPU += max(free[n].cpu, 0)
		totMem += max(free[n].mem, 0)
		totPods += max(free[n].pods, 0)
	}
	for _, w := range wants {
		placed := false
		for _, n := range names {
			f := free[n]
			if f.pods >= 1 && f.cpu >= w.cpu && f.mem >= w.mem {
				f.pods--
				f.cpu -= w.cpu
				f.mem -= w.mem
				placed = true
				break
			}
		}
		if !placed {
			return fmt.Errorf("the cluster cannot schedule the run's %d pods at once (they wait for each other at barriers): they request %s CPU and %s memory in all (%s); its %d schedulable node(s) have %s CPU, %s memory and %d pods free; a %s pod (cpu %s, memory %s) does not fit: lower the group sizes or the per-pod requests (-cpu, -memory, or [groups.resources]), or add nodes",
				len(wants), formatCPU(needCPU), formatBytes(needMem), groupList(r), len(names), formatCPU(totCPU), formatBytes(totMem), totPods, w.group, formatCPU(w.cpu), formatBytes(w.mem))
		}
	}
	return nil
}

// CheckImages fails, before any pod exists, when the pull policy is Never and a schedulable
// node does not hold the plan or sync image. The kubelet lists its images from a cache it
// refreshes every 30 s and reports them with its node status every 10 s, so an image loaded
// just now is waited for (imageWait) before the run is refused (seen in CI: a cluster started
// and loaded seconds before the run did not list the image within 20 s).
func CheckImages(ctx context.Context, api API, r *Run, poll time.Duration) error {
	if r.PullPolicy != "Never" {
		return nil
	}
	deadline := time.Now().Add(imageWait)
	for {
		nodes, err := api.Nodes(ctx)
		if err != nil {
			return fmt.Errorf("listing nodes: %w", err)
		}
		missing := ""
		for _, n := range nodes {
			if !schedulable(n) {
				continue
			}
			for _, img := range []string{r.Image, r.SyncImage} {
				if !nodeHasImage(n, img) {
					missing = fmt.Sprintf("image %s is not on node %s", img, n.Metadata.Name)
					break
				}
			}
			if missing != "" {
				break
			}
		}
		if missing == "" {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s, and the pull policy is Never: load it into every node's runtime (scripts/k8s.sh does: ctr -n k8s.io images import <archive from streamsim k8s image>), or push it to a registry and pass -pull-policy IfNotPresent", missing)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(max(poll, 500*time.Millisecond)):
		}
	}
}

// imageWait is how long CheckImages waits for a node to list an image.
var imageWait = 90 * time.Second

// nodeHasImage tells whether the node lists ref, as written or as the runtime normalizes a
// short name (docker.io/library/name:tag).
func nodeHasImage(n Node, ref string) bool {
	want := map[string]bool{ref: true}
	name := ref
	if !strings.Contains(name, ":") || strings.LastIndex(name, ":") < strings.LastIndex(name, "/") {
		name += ":latest"
		want[name] = true
	}
	if !strings.Contains(strings.SplitN(name, "/", 2)[0], ".") && !strings.HasPrefix(name, "localhost/") {
		if strings.Contains(name, "/") {
			want["docker.io/"+name] = true
		} else {
			want["docker.io/library/"+name] = true
		}
	}
	for _, img := range n.Status.Images {
		for _, nm := range img.Names {
			if want[nm] {
				return true
			}
		}
	}
	return false
}

func schedulable(n Node) bool {
	if n.Spec.Unschedulable {
		return false
	}
	for _, t := range n.Spec.Taints {
		if t.Effect == "NoSchedule" || t.Effect == "NoExecute" {
			return false
		}
	}
	for _, c := range n.Status.Conditions {
		if c.Type == "Ready" {
			return c.Status == "True"
		}
	}
	return false
}

// fatalWaiting are container waiting reasons no wait cures.
var fatalWaiting = map[string]bool{
	"ErrImageNeverPull": true, "ErrImagePull": true, "ImagePullBackOff": true, "InvalidImageName": true,
	"CreateContainerConfigError": true, "CreateContainerError": true, "RunContainerError": true,
}

// podProblem is why a pod can never run, or "".
func podProblem(p *Pod, pendingFor, unschedulable time.Duration) string {
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil && fatalWaiting[w.Reason] {
			return fmt.Sprintf("%s: %s", w.Reason, w.Message)
		}
	}
	for _, c := range p.Status.Conditions {
		if c.Type == "PodScheduled" && c.Status == "False" && c.Reason == "Unschedulable" && pendingFor >= unschedulable {
			return fmt.Sprintf("Unschedulable for %v: %s", pendingFor.Round(time.Second), c.Message)
		}
	}
	return ""
}

func waitSync(ctx context.Context, api API, r *Run, opts Options) error {
	sel := r.Selector() + "," + LabelComponent + "=" + ComponentSync
	first := time.Now()
	for {
		pods, err := api.Pods(ctx, r.Namespace, sel)
		if err != nil && ctx.Err() == nil {
			return fmt.Errorf("sync service: %w", err)
		}
		for i := range pods {
			p := &pods[i]
			if pr := podProblem(p, time.Since(first), opts.Unschedulable); pr != "" {
				return fmt.Errorf("sync service pod %s cannot run: %s", p.Metadata.Name, pr)
			}
			for _, c := range p.Status.Conditions {
				if c.Type == "Ready" && c.Status == "True" {
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("sync service (image %s) not ready before the deadline: %w", r.SyncImage, ctx.Err())
		case <-time.After(opts.Poll):
		}
	}
}

// watch follows the instance pods.
type watch struct {
	r           *Run
	out         *Outcome
	progress    io.Writer
	jobsApplied time.Time
	pods        map[string]*Pod
	firstSeen   map[string]time.Time
	cpu         map[string]uint64
	mem         map[string]uint64
	last        string
	lastPrint   time.Time
}

func newWatch(r *Run, out *Outcome, progress io.Writer) *watch {
	return &watch{r: r, out: out, progress: progress, pods: map[string]*Pod{}, firstSeen: map[string]time.Time{},
		cpu: map[string]uint64{}, mem: map[string]uint64{}}
}

func (w *watch) wait(ctx context.Context, api API, opts Options) error {
	sel := w.r.Selector() + "," + LabelComponent + "=" + ComponentInstance
	n := w.r.Instances()
	statsOK := true
	for {
		pods, err := api.Pods(ctx, w.r.Namespace, sel)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			fmt.Fprintf(w.progress, "listing pods: %v (retrying)\n", err)
		}
		var scheduled, running, succeeded, failed int
		nodes := map[string]bool{}
		for i := range pods {
			p := pods[i]
			name := p.Metadata.Name
			w.pods[name] = &p
			if _, ok := w.firstSeen[name]; !ok {
				w.firstSeen[name] = time.Now()
			}
			if p.Spec.NodeName != "" {
				scheduled++
				nodes[p.Spec.NodeName] = true
			}
			switch p.Status.Phase {
			case "Running":
				running++
			case "Succeeded":
				succeeded++
			case "Failed":
				failed++
			}
			if pr := podProblem(&p, time.Since(w.firstSeen[name]), opts.Unschedulable); pr != "" {
				return fmt.Errorf("pod %s (group %s) cannot run: %s", name, p.Metadata.Labels[LabelGroup], pr)
			}
		}
		if running+succeeded+failed == n && w.out.AllRunning == 0 {
			w.out.AllRunning = time.Since(w.jobsApplied).Seconds()
		}
		if statsOK && running > 0 {
			statsOK = w.sample(ctx, api, nodes)
		}
		line := fmt.Sprintf("pods: %d/%d created, %d scheduled, %d running, %d succeeded, %d failed", len(pods), n, scheduled, running, succeeded, failed)
		if line != w.last || time.Since(w.lastPrint) >= 30*time.Second {
			fmt.Fprintf(w.progress, "[%5.0fs] %s\n", time.Since(w.jobsApplied).Seconds(), line)
			w.last, w.lastPrint = line, time.Now()
		}
		if len(pods) == n && succeeded+failed == n {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(opts.Poll):
		}
	}
}

// sample reads each node's kubelet summary once; false when the cluster does not serve it.
func (w *watch) sample(ctx context.Context, api API, nodes map[string]bool) bool {
	for node := range nodes {
		s, err := api.Stats(ctx, node)
		if err != nil {
			if ctx.Err() == nil {
				w.out.StatsProblems = err.Error()
				fmt.Fprintf(w.progress, "per-pod CPU and memory unavailable: %v\n", err)
			}
			return false
		}
		for _, p := range s.Pods {
			if p.PodRef.Namespace != w.r.Namespace {
				continue
			}
			if p.CPU != nil && p.CPU.UsageCoreNanoSeconds > w.cpu[p.PodRef.Name] {
				w.cpu[p.PodRef.Name] = p.CPU.UsageCoreNanoSeconds
			}
			if p.Memory != nil && p.Memory.WorkingSetBytes > w.mem[p.PodRef.Name] {
				w.mem[p.PodRef.Name] = p.Memory.WorkingSetBytes
			}
		}
	}
	return true
}

// collect fills the outcome's pods and writes each pod's log into its outputs directory.
func collect(api API, r *Run, out *Outcome, w *watch, opts Options) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	seen := map[string]bool{}
	for name, p := range w.pods {
		group := p.Metadata.Labels[LabelGroup]
		idx, err := strconv.Atoi(p.Metadata.Annotations[indexAnnotation])
		if err != nil {
			idx = -1
		}
		pr := PodResult{Name: name, Group: group, Index: idx, Node: p.Spec.NodeName, Phase: p.Status.Phase,
			Reason: p.Status.Reason, Message: p.Status.Message,
			CPUSeconds: float64(w.cpu[name]) / 1e9, PeakMemoryBytes: w.mem[name]}
		for _, cs := range p.Status.ContainerStatuses {
			if t := cs.State.Terminated; t != nil {
				code := t.ExitCode
				pr.ExitCode = &code
				if pr.Reason == "" {
					pr.Reason = t.Reason
				}
				if pr.Message == "" {
					pr.Message = strings.TrimSpace(t.Message)
				}
			} else if wt := cs.State.Waiting; wt != nil && pr.Reason == "" {
				pr.Reason, pr.Message = wt.Reason, wt.Message
			}
		}
		if pr.Phase != "Succeeded" && pr.Phase != "Failed" {
			if out.DeadlineHit {
				pr.Reason = "DeadlineExceeded"
				pr.Message = fmt.Sprintf("still %s when the run's deadline (%v) passed", strings.ToLower(pr.Phase), r.Deadline)
			} else if out.Abandoned != "" && pr.Reason == "" {
				pr.Reason = "Abandoned"
				pr.Message = out.Abandoned
			}
		}
		dir := ""
		if idx >= 0 && group != "" {
			dir = filepath.Join(opts.Out, group, strconv.Itoa(idx))
		}
		logs, lerr := api.Logs(ctx, r.Namespace, name, 0)
		if lerr == nil && dir != "" && logs != "" {
			if err := os.MkdirAll(dir, 0o755); err == nil {
				_ = os.WriteFile(filepath.Join(dir, PodLogFile), []byte(logs), 0o644)
			}
		}
		outcomeLog := logs
		if strings.TrimSpace(outcomeLog) == "" && dir != "" {
			if b, err := os.ReadFile(filepath.Join(dir, "run.out")); err == nil {
				outcomeLog = string(b)
			}
		}
		var outcomeMsg string
		pr.Outcome, outcomeMsg = instanceOutcome(outcomeLog)
		if pr.Phase == "Succeeded" && pr.Outcome != OutcomeSuccess {
			pr.Reason = "Instance" + strings.ToUpper(pr.Outcome[:1]) + pr.Outcome[1:]
			pr.Message = outcomeMsg
			if pr.Outcome == OutcomeNone {
				pr.Message = "the pod exited 0 but its log holds no success event"
			}
		}
		if pr.Failed() {
			tail := lastLines(logs, opts.LogTail)
			if strings.TrimSpace(tail) == "" && dir != "" {
				// No container log (never started, or the runtime lost it): the SDK's
				// own run.out in the outputs, if any.
				if b, err := os.ReadFile(filepath.Join(dir, "run.out")); err == nil {
					tail = lastLines(string(b), opts.LogTail)
				}
			}
			if strings.TrimSpace(tail) != "" {
				pr.LogTail = strings.Split(tail, "\n")
			} else if lerr != nil && pr.Phase != "Pending" {
				pr.LogTail = []string{"(no logs: " + lerr.Error() + ")"}
			}
		}
		seen[group+"/"+strconv.Itoa(idx)] = true
		out.Pods = append(out.Pods, pr)
	}
	// Instances whose pod never appeared (a Job the controller did not fill before the end).
	for _, g := range r.Groups {
		for i := range g.Instances {
			if !seen[g.ID+"/"+strconv.Itoa(i)] {
				reason := "NotCreated"
				if out.DeadlineHit {
					reason = "DeadlineExceeded"
				}
				out.Pods = append(out.Pods, PodResult{Name: r.JobName(g.ID) + "-" + strconv.Itoa(i), Group: g.ID, Index: i,
					Phase: "Missing", Reason: reason, Message: "the Job created no pod for this index"})
			}
		}
	}
	sort.Slice(out.Pods, func(i, j int) bool {
		a, b := out.Pods[i], out.Pods[j]
		if a.Group != b.Group {
			return groupOrder(r, a.Group) < groupOrder(r, b.Group)
		}
		return a.Index < b.Index
	})
}

func groupOrder(r *Run, id string) int {
	for i, g := range r.Groups {
		if g.ID == id {
			return i
		}
	}
	return len(r.Groups)
}

func writeOutcome(dir string, out *Outcome) error {
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return fmt.Errorf("outcome: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, OutcomeFile), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("outcome: %w", err)
	}
	return nil
}

// report prints the failed pods with their logs' last lines, and the resource table.
func report(w io.Writer, out *Outcome) {
	failed := out.Failed()
	fmt.Fprintf(w, "%d of %d pods succeeded in %.0f s (sync service ready after %.1f s, every pod running %.1f s after the jobs were applied)\n",
		len(out.Pods)-len(failed), len(out.Pods), out.Elapsed, out.SyncReady, out.AllRunning)
	if out.DeadlineHit {
		fmt.Fprintln(w, "the run's deadline passed: the pods still running were stopped")
	}
	const tails = 5 // log tails printed; every failed pod's is in the outcome file
	for i, p := range failed {
		if i == tails {
			fmt.Fprintf(w, "… and %d more failed pods (each with its log's last lines in %s)\n", len(failed)-tails, OutcomeFile)
			break
		}
		code := ""
		if p.ExitCode != nil {
			code = fmt.Sprintf(", exit code %d", *p.ExitCode)
		}
		fmt.Fprintf(w, "FAILED %s (%s/%d): %s%s, outcome %s", p.Name, p.Group, p.Index, p.Phase, code, p.Outcome)
		if p.Reason != "" {
			fmt.Fprintf(w, ", %s", p.Reason)
		}
		if p.Message != "" {
			fmt.Fprintf(w, ": %s", p.Message)
		}
		fmt.Fprintln(w)
		for _, l := range p.LogTail {
			fmt.Fprintf(w, "    | %s\n", l)
		}
	}
	var cpuSum, cpuMax float64
	var memMax uint64
	var n int
	for _, p := range out.Pods {
		if p.PeakMemoryBytes == 0 {
			continue
		}
		n++
		cpuSum += p.CPUSeconds
		cpuMax = max(cpuMax, p.CPUSeconds)
		memMax = max(memMax, p.PeakMemoryBytes)
	}
	if n > 0 {
		fmt.Fprintf(w, "per pod (kubelet summary, %d pods): CPU mean %.1f s, max %.1f s; peak working set max %.0f MiB\n",
			n, cpuSum/float64(n), cpuMax, float64(memMax)/(1<<20))
	}
}

// outcomeError is nil when every pod succeeded, else names them.
func outcomeError(out *Outcome, r *Run) error {
	failed := out.Failed()
	if len(failed) == 0 {
		return nil
	}
	names := make([]string, 0, len(failed))
	for _, p := range failed {
		s := p.Name + " (" + p.Phase + "/" + p.Outcome
		if p.Reason != "" {
			s += ", " + p.Reason
		}
		names = append(names, s+")")
	}
	const show = 8
	more := ""
	if len(names) > show {
		more = fmt.Sprintf(" and %d more", len(names)-show)
		names = names[:show]
	}
	what := "pods did not succeed"
	if out.DeadlineHit {
		what = fmt.Sprintf("pods did not succeed before the deadline (%v)", r.Deadline)
	}
	err := fmt.Errorf("%d of %d %s: %s%s", len(failed), len(out.Pods), what, strings.Join(names, ", "), more)
	if out.Abandoned != "" {
		err = fmt.Errorf("run stopped: %s (%w)", out.Abandoned, err)
	}
	return err
}

// cleanup deletes the run's objects and waits (up to a minute) for its pods to be gone, so the
// next run starts on a quiet node.
func cleanup(api API, r *Run, poll time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := api.Delete(ctx, r.Namespace, r.Selector()); err != nil {
		return err
	}
	for {
		pods, err := api.Pods(ctx, r.Namespace, r.Selector())
		if err == nil && len(pods) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("pods of run %s still present a minute after deletion (%d)", r.ID, len(pods))
		case <-time.After(poll):
		}
	}
}

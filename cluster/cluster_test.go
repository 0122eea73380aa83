package cluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/streamsim/streamsim/sim/runner"
)

const hubLeavesComposition = `
[metadata]
name = "hl"

[global]
plan = "{{ or $.Env.STREAMSIM_TG_PLAN "streamsim" }}"
case = "hub-leaves"
builder = "docker:go"
runner = "cluster:k8s"

[global.run.test_params]
slots = "2"
time_scale = "4"
publishers = "2"
seed = "7"

[[groups]]
id = "publishers"
instances = { count = 2 }

[[groups]]
id = "hub"
instances = { count = 1 }
[groups.resources]
cpu = "500m"
memory = "256Mi"

[[groups]]
id = "leaf-0-plain"
instances = { count = 1 }
[groups.run.test_params]
codec = "plain"

[[groups]]
id = "leaf-1-zstd"
instances = { count = 1 }
[groups.run.test_params]
codec = "zstd"
`

func testRun(t *testing.T, comp string) *Run {
	t.Helper()
	r, err := parseComposition("test.toml", []byte(comp), map[string]string{"STREAMSIM_TG_PLAN": "streamsim-checkout/x"})
	if err != nil {
		t.Fatal(err)
	}
	r.ID, r.Namespace, r.Image, r.SyncImage, r.PullPolicy = "t1", "ns1", "plan:1", "sync:1", "Never"
	r.HostNetwork, r.SyncPort, r.Deadline = true, 40123, 10*time.Minute
	r.OutputsHostPath = "/tmp/out-t1"
	r.Started = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	return r
}

func envOf(c Container) map[string]EnvVar {
	m := map[string]EnvVar{}
	for _, e := range c.Env {
		m[e.Name] = e
	}
	return m
}

func TestCompositionToJobs(t *testing.T) {
	r := testRun(t, hubLeavesComposition)
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	if r.Plan != "streamsim-checkout/x" || r.Case != "hub-leaves" || r.Name != "hl" {
		t.Fatalf("plan %q case %q name %q", r.Plan, r.Case, r.Name)
	}
	objs := r.Manifests()
	// Namespace, Deployment, Service, then one Job per group in composition order.
	kinds := []string{}
	for _, o := range objs {
		kinds = append(kinds, o.Kind+"/"+o.Metadata.Name)
	}
	want := []string{"Namespace/ns1", "Deployment/ss-t1-sync", "Service/ss-t1-sync",
		"Job/ss-t1-publishers", "Job/ss-t1-hub", "Job/ss-t1-leaf-0-plain", "Job/ss-t1-leaf-1-zstd"}
	if strings.Join(kinds, " ") != strings.Join(want, " ") {
		t.Fatalf("objects %v, want %v", kinds, want)
	}
	for i, g := range r.Groups {
		job := objs[3+i]
		spec := job.Spec.(JobSpec)
		if spec.CompletionMode != "Indexed" || spec.Completions != g.Instances || spec.Parallelism != g.Instances {
			t.Errorf("%s: mode %s completions %d parallelism %d, want Indexed %d %d", g.ID, spec.CompletionMode, spec.Completions, spec.Parallelism, g.Instances, g.Instances)
		}
		if spec.BackoffLimitPerIndex != 0 || spec.MaxFailedIndexes != g.Instances || spec.ActiveDeadlineSeconds != 600 {
			t.Errorf("%s: backoff per index %d, max failed %d, deadline %d", g.ID, spec.BackoffLimitPerIndex, spec.MaxFailedIndexes, spec.ActiveDeadlineSeconds)
		}
		for _, l := range []map[string]string{job.Metadata.Labels, spec.Template.Metadata.Labels} {
			if l[LabelRun] != "t1" || l[LabelGroup] != g.ID || l[LabelComponent] != ComponentInstance || l[LabelApp] != AppName {
				t.Errorf("%s: labels %v", g.ID, l)
			}
		}
		pod := spec.Template.Spec
		if !pod.HostNetwork || pod.RestartPolicy != "Never" || len(pod.Containers) != 1 {
			t.Fatalf("%s: pod %+v", g.ID, pod)
		}
		c := pod.Containers[0]
		if c.Image != "plan:1" || c.ImagePullPolicy != "Never" || c.Command[0] != "/plan" {
			t.Errorf("%s: container %s %s %v", g.ID, c.Image, c.ImagePullPolicy, c.Command)
		}
		env := envOf(c)
		if c.Env[0].Name != "STREAMSIM_JOB_INDEX" || c.Env[0].ValueFrom.FieldRef.FieldPath != "metadata.annotations['batch.kubernetes.io/job-completion-index']" {
			t.Errorf("%s: first env %+v, want the completion index", g.ID, c.Env[0])
		}
		wantEnv := map[string]string{
			"TEST_PLAN": "streamsim-checkout/x", "TEST_CASE": "hub-leaves", "TEST_RUN": "t1",
			"TEST_GROUP_ID": g.ID, "TEST_GROUP_INSTANCE_COUNT": fmt.Sprint(g.Instances),
			"TEST_INSTANCE_COUNT": "5", "TEST_SIDECAR": "false", "TEST_OUTPUTS_PATH": "/outputs",
			"SYNC_SERVICE_HOST": "127.0.0.1", "SYNC_SERVICE_PORT": "40123", "TEST_DISABLE_METRICS": "true",
			"TEST_START_TIME": "2026-01-02T03:04:05Z",
		}
		for k, v := range wantEnv {
			if env[k].Value != v {
				t.Errorf("%s: %s=%q, want %q", g.ID, k, env[k].Value, v)
			}
		}
		if _, ok := env[runner.EnvDataIP]; ok {
			t.Errorf("%s: host network pods must not set %s (they listen on 127.0.0.1)", g.ID, runner.EnvDataIP)
		}
		params := env["TEST_INSTANCE_PARAMS"].Value
		wantParams := "publishers=2|seed=7|slots=2|time_scale=4"
		switch g.ID {
		case "leaf-0-plain":
			wantParams = "codec=plain|" + wantParams
		case "leaf-1-zstd":
			wantParams = "codec=zstd|" + wantParams
		}
		if params != wantParams {
			t.Errorf("%s: TEST_INSTANCE_PARAMS %q, want %q", g.ID, params, wantParams)
		}
		cpu, mem := "50m", "128Mi"
		if g.ID == "hub" {
			cpu, mem = "500m", "256Mi"
		}
		if c.Resources.Requests["cpu"] != cpu || c.Resources.Requests["memory"] != mem || c.Resources.Limits["memory"] != "1Gi" {
			t.Errorf("%s: resources %+v, want cpu %s memory %s limit 1Gi", g.ID, c.Resources, cpu, mem)
		}
		if _, ok := c.Resources.Limits["cpu"]; ok {
			t.Errorf("%s: a CPU limit would throttle gossip timing", g.ID)
		}
		if len(c.VolumeMounts) < 1 || c.VolumeMounts[0].MountPath != "/outputs" || c.VolumeMounts[0].SubPathExpr != "$(TEST_GROUP_ID)/$(STREAMSIM_JOB_INDEX)" {
			t.Errorf("%s: outputs mount %+v", g.ID, c.VolumeMounts)
		}
		if pod.Volumes[0].HostPath == nil || pod.Volumes[0].HostPath.Path != "/tmp/out-t1" {
			t.Errorf("%s: outputs volume %+v", g.ID, pod.Volumes[0])
		}
	}
	// The sync service listens on loopback at the run's port.
	dep := objs[1].Spec.(DeploymentSpec)
	senv := envOf(dep.Template.Spec.Containers[0])
	if senv[EnvSyncListenHost].Value != "127.0.0.1" || senv[EnvSyncListenPort].Value != "40123" || !dep.Template.Spec.HostNetwork {
		t.Errorf("sync env %+v host network %v", senv, dep.Template.Spec.HostNetwork)
	}
	// The whole list is JSON kubectl reads.
	b, err := MarshalList(objs)
	if err != nil {
		t.Fatal(err)
	}
	var back struct {
		Kind  string           `json:"kind"`
		Items []map[string]any `json:"items"`
	}
	if err := json.Unmarshal(b, &back); err != nil || back.Kind != "List" || len(back.Items) != 7 {
		t.Fatalf("list: %v kind %q items %d", err, back.Kind, len(back.Items))
	}
}

func TestPodNetworking(t *testing.T) {
	r := testRun(t, hubLeavesComposition)
	r.HostNetwork = false
	r.OutputsHostPath, r.OutputsClaim = "", "outputs-rwx"
	r.SyncPort = 5050
	if err := r.Validate(); err != nil {
		t.Fatal(err)
	}
	job := r.Job(r.Groups[1]).Spec.(JobSpec)
	pod := job.Template.Spec
	env := envOf(pod.Containers[0])
	if pod.HostNetwork {
		t.Error("pod networking: hostNetwork set")
	}
	if env["SYNC_SERVICE_HOST"].Value != "ss-t1-sync.ns1.svc" {
		t.Errorf("sync host %q, want the Service's name", env["SYNC_SERVICE_HOST"].Value)
	}
	if e, ok := env[runner.EnvDataIP]; !ok || e.ValueFrom == nil || e.ValueFrom.FieldRef.FieldPath != "status.podIP" {
		t.Errorf("%s: %+v, want the pod IP", runner.EnvDataIP, e)
	}
	if pod.Volumes[0].PersistentVolumeClaim == nil || pod.Volumes[0].PersistentVolumeClaim.ClaimName != "outputs-rwx" {
		t.Errorf("outputs volume %+v", pod.Volumes[0])
	}
	senv := envOf(r.SyncObjects()[0].Spec.(DeploymentSpec).Template.Spec.Containers[0])
	if senv[EnvSyncListenHost].Value != "0.0.0.0" {
		t.Errorf("sync service on a pod network listens on %q", senv[EnvSyncListenHost].Value)
	}
}

func TestValidateBadInput(t *testing.T) {
	cases := []struct {
		name   string
		change func(r *Run)
		want   string
	}{
		{"unknown case", func(r *Run) { r.Case = "nope" }, `unknown scenario "nope"`},
		{"bad param", func(r *Run) { r.Params["slots"] = "many" }, "slots"},
		{"bad codec", func(r *Run) { r.Groups[2].Params = map[string]string{"codec": "lz4"} }, "group leaf-0-plain"},
		{"publishers mismatch", func(r *Run) { r.Groups[0].Instances = 3 }, "publishers"},
		{"pipe in param", func(r *Run) { r.Params["mix"] = "a|b" }, "'|' or '='"},
		{"bad run id", func(r *Run) { r.ID = "Run_1" }, "run id"},
		{"bad quantity", func(r *Run) { r.Groups[1].Resources.CPU = "lots" }, "group hub: cpu"},
		{"zero instances", func(r *Run) { r.Groups[1].Instances = 0 }, "group hub: 0 instances"},
		{"bad pull policy", func(r *Run) { r.PullPolicy = "Sometimes" }, "pull policy"},
		{"two outputs", func(r *Run) { r.OutputsClaim = "c" }, "exactly one"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := testRun(t, hubLeavesComposition)
			c.change(r)
			err := r.Validate()
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to mention %q", err, c.want)
			}
		})
	}
}

func TestCompositionBadInput(t *testing.T) {
	for name, c := range map[string]struct{ comp, want string }{
		"sweep":    {hubLeavesComposition + "\n[[runs]]\nid = \"a\"\n", "[[runs]]"},
		"no case":  {"[global]\nplan = \"x\"\n[[groups]]\nid = \"a\"\ninstances = { count = 1 }\n", "global.case"},
		"no count": {"[global]\ncase = \"mesh\"\n[[groups]]\nid = \"a\"\n", "instances.count"},
		"number":   {"[global]\ncase = \"mesh\"\n[global.run.test_params]\nslots = 2\n", "TOML strings"},
		"resource": {"[global]\ncase = \"mesh\"\n[[groups]]\nid = \"a\"\ninstances = { count = 3 }\n[groups.resources]\ngpu = \"1\"\n", "unknown key"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := parseComposition("c.toml", []byte(c.comp), nil)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to mention %q", err, c.want)
			}
		})
	}
}

func TestJobNameFitsALabel(t *testing.T) {
	r := &Run{ID: "r1201-192000"}
	long := strings.Repeat("leaf-snappy-stream-", 5)
	n := r.JobName(long)
	if len(n) > 63 || strings.HasSuffix(n, "-") || !idPattern.MatchString(n) {
		t.Fatalf("job name %q (%d) is not a DNS label of ≤63", n, len(n))
	}
	if got := r.JobName("Leaf_1.Zstd"); got != "ss-r1201-192000-leaf-1-zstd" {
		t.Fatalf("job name %q", got)
	}
}

func TestParseQuantity(t *testing.T) {
	for in, want := range map[string]int64{"250m": 250, "2": 2000, "1.5": 1500, "128Mi": 128 << 20 * 1000, "1Gi": 1 << 30 * 1000, "1k": 1e6, "0": 0} {
		got, err := ParseQuantity(in)
		if err != nil || got != want {
			t.Errorf("%s: %d %v, want %d", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "x", "-1", "1e3", "12Qi"} {
		if _, err := ParseQuantity(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// fakeAPI is a cluster in memory: a node, and pods the test scripts.
type fakeAPI struct {
	mu        sync.Mutex
	nodes     []Node
	applied   [][]byte
	deleted   []string
	pods      func(call int) []Pod // instance pods on the call-th poll
	calls     int
	logs      map[string]string
	checkErr  error
	others    []Pod
	syncReady bool
}

func (f *fakeAPI) Check(context.Context) (string, error) { return "v1.34.4", f.checkErr }
func (f *fakeAPI) Apply(_ context.Context, b []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.applied = append(f.applied, b)
	return nil
}
func (f *fakeAPI) Pods(_ context.Context, _ string, sel string) ([]Pod, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.deleted) > 0 {
		return nil, nil
	}
	if strings.Contains(sel, ComponentSync) {
		p := Pod{}
		p.Metadata.Name = "sync-0"
		p.Status.Phase = "Running"
		p.Status.Conditions = append(p.Status.Conditions, struct {
			Type    string `json:"type"`
			Status  string `json:"status"`
			Reason  string `json:"reason"`
			Message string `json:"message"`
		}{Type: "Ready", Status: "True"})
		return []Pod{p}, nil
	}
	f.calls++
	return f.pods(f.calls), nil
}
func (f *fakeAPI) Nodes(context.Context) ([]Node, error)  { return f.nodes, nil }
func (f *fakeAPI) AllPods(context.Context) ([]Pod, error) { return f.others, nil }
func (f *fakeAPI) Logs(_ context.Context, _, pod string, tail int) (string, error) {
	l, ok := f.logs[pod]
	if !ok {
		return "", errors.New("no such pod")
	}
	return l, nil
}
func (f *fakeAPI) Delete(_ context.Context, _, sel string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.deleted = append(f.deleted, sel)
	return nil
}
func (f *fakeAPI) Stats(context.Context, string) (*NodeStats, error) {
	var s NodeStats
	if err := json.Unmarshal([]byte(`{"pods":[{"podRef":{"name":"ss-t1-hub-0-x","namespace":"ns1"},"cpu":{"usageCoreNanoSeconds":2500000000},"memory":{"workingSetBytes":52428800}}]}`), &s); err != nil {
		panic(err)
	}
	return &s, nil
}

func readyNode(cpu, mem, pods string) Node {
	var n Node
	n.Metadata.Name = "node-a"
	n.Status.Allocatable = map[string]string{"cpu": cpu, "memory": mem, "pods": pods}
	n.Status.Images = append(n.Status.Images, struct {
		Names []string `json:"names"`
	}{[]string{"docker.io/library/plan:1", "docker.io/library/plan@sha256:00"}}, struct {
		Names []string `json:"names"`
	}{[]string{"docker.io/library/sync:1"}})
	n.Status.Conditions = append(n.Status.Conditions, struct {
		Type   string `json:"type"`
		Status string `json:"status"`
	}{"Ready", "True"})
	return n
}

func instancePod(r *Run, group string, index int, phase string) Pod {
	var p Pod
	p.Metadata.Name = fmt.Sprintf("%s-%d-x", r.JobName(group), index)
	p.Metadata.Labels = map[string]string{LabelGroup: group, LabelRun: r.ID, LabelComponent: ComponentInstance}
	p.Metadata.Annotations = map[string]string{indexAnnotation: fmt.Sprint(index)}
	p.Spec.NodeName = "node-a"
	p.Status.Phase = phase
	return p
}

func terminated(p Pod, code int, reason string) Pod {
	cs := ContainerStatus{Name: "instance"}
	cs.State.Terminated = &struct {
		ExitCode   int    `json:"exitCode"`
		Reason     string `json:"reason"`
		Message    string `json:"message"`
		StartedAt  string `json:"startedAt"`
		FinishedAt string `json:"finishedAt"`
	}{ExitCode: code, Reason: reason}
	p.Status.ContainerStatuses = []ContainerStatus{cs}
	return p
}

func allPods(r *Run, phase func(group string, i int) Pod) []Pod {
	var ps []Pod
	for _, g := range r.Groups {
		for i := range g.Instances {
			ps = append(ps, phase(g.ID, i))
		}
	}
	return ps
}

func fastOptions(out string) Options {
	return Options{Out: out, Poll: time.Millisecond, Unschedulable: 20 * time.Millisecond}
}

func TestExecuteCrashedPodNamedWithLogs(t *testing.T) {
	r := testRun(t, hubLeavesComposition)
	out := t.TempDir()
	r.OutputsHostPath = out
	crashed := r.JobName("leaf-1-zstd") + "-0-x"
	api := &fakeAPI{
		nodes: []Node{readyNode("2", "8Gi", "110")},
		logs: map[string]string{crashed: "line 1\nline 2\npanic: boom\ngoroutine 1 [running]:\n",
			r.JobName("hub") + "-0-x": "hub ok\n" + successEvent,
			// Exits 0 but recorded a failure: the SDK does that.
			r.JobName("leaf-0-plain") + "-0-x": "x\n" + `{"ts":1,"event":{"failure_event":{"group":"leaf-0-plain","error":"parity: 3 messages missing"}}}` + "\n",
			r.JobName("publishers") + "-0-x":   successEvent, r.JobName("publishers") + "-1-x": successEvent},
		pods: func(call int) []Pod {
			return allPods(r, func(g string, i int) Pod {
				if call < 3 {
					return instancePod(r, g, i, "Running")
				}
				if g == "leaf-1-zstd" {
					return terminated(instancePod(r, g, i, "Failed"), 2, "Error")
				}
				return terminated(instancePod(r, g, i, "Succeeded"), 0, "Completed")
			})
		},
	}
	var progress strings.Builder
	opts := fastOptions(out)
	opts.Progress = &progress
	opts.LogTail = 2
	o, err := Execute(context.Background(), api, r, opts)
	if err == nil || !strings.Contains(err.Error(), "2 of 5 pods did not succeed") || !strings.Contains(err.Error(), crashed) {
		t.Fatalf("error %v, want the crashed pod named", err)
	}
	f := o.Failed()
	if len(f) != 2 || f[1].Group != "leaf-1-zstd" || f[1].Index != 0 || *f[1].ExitCode != 2 || f[1].Reason != "Error" || f[1].Outcome != OutcomeNone {
		t.Fatalf("failed %+v", f)
	}
	if f[0].Group != "leaf-0-plain" || f[0].Phase != "Succeeded" || f[0].Outcome != OutcomeFailure || f[0].Reason != "InstanceFailure" || f[0].Message != "parity: 3 messages missing" {
		t.Fatalf("an instance that recorded a failure and exited 0: %+v", f[0])
	}
	if strings.Join(f[1].LogTail, "\n") != "panic: boom\ngoroutine 1 [running]:" {
		t.Fatalf("log tail %q, want the last 2 lines", f[1].LogTail)
	}
	rep := progress.String()
	if !strings.Contains(rep, "FAILED "+crashed+" (leaf-1-zstd/0): Failed, exit code 2, outcome none, Error") || !strings.Contains(rep, "    | panic: boom") {
		t.Fatalf("report does not name the pod with its log lines:\n%s", rep)
	}
	// Logs land in each instance's outputs directory; the outcome next to them.
	if b, err := os.ReadFile(filepath.Join(out, "hub", "0", PodLogFile)); err != nil || string(b) != "hub ok\n"+successEvent {
		t.Fatalf("hub log %q %v", b, err)
	}
	var back Outcome
	b, err := os.ReadFile(filepath.Join(out, OutcomeFile))
	if err != nil || json.Unmarshal(b, &back) != nil || len(back.Pods) != 5 || back.Server != "v1.34.4" {
		t.Fatalf("outcome file: %v %+v", err, back)
	}
	// Per-pod resources from the kubelet summary.
	for _, p := range back.Pods {
		if p.Group == "hub" && (p.CPUSeconds != 2.5 || p.PeakMemoryBytes != 50<<20) {
			t.Errorf("hub resources %v s %d B", p.CPUSeconds, p.PeakMemoryBytes)
		}
	}
	// Sync service first, then the jobs; everything deleted by the run's label.
	if len(api.applied) != 2 || !strings.Contains(string(api.applied[0]), `"kind": "Deployment"`) || strings.Contains(string(api.applied[0]), `"kind": "Job"`) {
		t.Fatalf("applied %d lists", len(api.applied))
	}
	if len(api.deleted) != 1 || api.deleted[0] != LabelRun+"=t1" {
		t.Fatalf("deleted %v", api.deleted)
	}
}

func TestExecuteImageCannotBeLoaded(t *testing.T) {
	r := testRun(t, hubLeavesComposition)
	out := t.TempDir()
	api := &fakeAPI{
		nodes: []Node{readyNode("2", "8Gi", "110")},
		logs:  map[string]string{},
		pods: func(int) []Pod {
			return allPods(r, func(g string, i int) Pod {
				p := instancePod(r, g, i, "Pending")
				cs := ContainerStatus{Name: "instance"}
				cs.State.Waiting = &struct {
					Reason  string `json:"reason"`
					Message string `json:"message"`
				}{"ErrImageNeverPull", `Container image "plan:1" is not present with pull policy of Never`}
				p.Status.ContainerStatuses = []ContainerStatus{cs}
				return p
			})
		},
	}
	_, err := Execute(context.Background(), api, r, fastOptions(out))
	if err == nil || !strings.Contains(err.Error(), "ErrImageNeverPull") || !strings.Contains(err.Error(), `"plan:1" is not present`) {
		t.Fatalf("error %v, want the image named", err)
	}
	if len(api.deleted) != 1 {
		t.Fatal("a stopped run must still be cleaned up")
	}
}

func TestExecuteDeadline(t *testing.T) {
	r := testRun(t, hubLeavesComposition)
	r.Deadline = 50 * time.Millisecond
	out := t.TempDir()
	api := &fakeAPI{
		nodes: []Node{readyNode("2", "8Gi", "110")},
		logs:  map[string]string{},
		pods: func(int) []Pod {
			return allPods(r, func(g string, i int) Pod { return instancePod(r, g, i, "Running") })
		},
	}
	o, err := Execute(context.Background(), api, r, fastOptions(out))
	if err == nil || !strings.Contains(err.Error(), "before the deadline") || !o.DeadlineHit {
		t.Fatalf("error %v, want a deadline failure", err)
	}
	if f := o.Failed(); len(f) != 5 || f[0].Reason != "DeadlineExceeded" {
		t.Fatalf("failed %+v", f)
	}
	if len(api.deleted) != 1 {
		t.Fatal("a run past its deadline must be cleaned up")
	}
}

func TestCapacityUnschedulableGroupSize(t *testing.T) {
	r := testRun(t, hubLeavesComposition)
	r.Groups[0].Instances, r.Params["publishers"] = 40, "40"
	api := &fakeAPI{nodes: []Node{readyNode("2", "8Gi", "110")}}
	// 40 publishers at 50m, hub 500m, two leaves, the sync service: 2.65 CPU > 2.
	err := CheckCapacity(context.Background(), api, r)
	if err == nil || !strings.Contains(err.Error(), "cannot schedule the run's 44 pods") || !strings.Contains(err.Error(), "2650m CPU") || !strings.Contains(err.Error(), "2000m CPU") {
		t.Fatalf("error %v", err)
	}
	// Pods the node already holds count.
	r.Groups[0].Instances, r.Params["publishers"] = 2, "2"
	busy := instancePod(r, "other", 0, "Running")
	busy.Spec.Containers = []struct {
		Resources ResourceSpec `json:"resources"`
	}{{ResourceSpec{Requests: map[string]string{"cpu": "1500m"}}}}
	api.others = []Pod{busy}
	if err := CheckCapacity(context.Background(), api, r); err == nil || !strings.Contains(err.Error(), "500m CPU") {
		t.Fatalf("error %v, want the busy node's 500m free", err)
	}
	api.others = nil
	if err := CheckCapacity(context.Background(), api, r); err != nil {
		t.Fatal(err)
	}
	// Pod count.
	api.nodes = []Node{readyNode("64", "64Gi", "4")}
	if err := CheckCapacity(context.Background(), api, r); err == nil || !strings.Contains(err.Error(), "4 pods free") {
		t.Fatalf("error %v", err)
	}
	// No Ready node.
	n := readyNode("2", "8Gi", "110")
	n.Status.Conditions[0].Status = "False"
	api.nodes = []Node{n}
	if err := CheckCapacity(context.Background(), api, r); err == nil || !strings.Contains(err.Error(), "no Ready, schedulable node") {
		t.Fatalf("error %v", err)
	}
}

func TestImageNotLoadedBeforeAnyPod(t *testing.T) {
	defer func(w time.Duration) { imageWait = w }(imageWait)
	imageWait = 10 * time.Millisecond
	r := testRun(t, hubLeavesComposition)
	r.Image = "streamsim-plan:other"
	api := &fakeAPI{nodes: []Node{readyNode("2", "8Gi", "110")}}
	_, err := Execute(context.Background(), api, r, fastOptions(t.TempDir()))
	if err == nil || !strings.Contains(err.Error(), "image streamsim-plan:other is not on node node-a") || !strings.Contains(err.Error(), "-pull-policy IfNotPresent") {
		t.Fatalf("error %v", err)
	}
	if len(api.applied) != 0 {
		t.Fatal("applied although the image is missing")
	}
	// A registry image is the registry's business.
	r.PullPolicy = "IfNotPresent"
	if err := CheckImages(context.Background(), api, r, time.Millisecond); err != nil {
		t.Fatal(err)
	}
	// Short names resolve as the runtime resolves them.
	for ref, want := range map[string]bool{"plan:1": true, "docker.io/library/plan:1": true, "library/plan:1": true, "plan": false, "plan:2": false, "example.com/plan:1": false} {
		if got := nodeHasImage(api.nodes[0], ref); got != want {
			t.Errorf("%s: %v, want %v", ref, got, want)
		}
	}
}

func TestExecuteRefusesUsedOutputs(t *testing.T) {
	r := testRun(t, hubLeavesComposition)
	out := t.TempDir()
	if err := os.MkdirAll(filepath.Join(out, "hub", "0"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "hub", "0", "summary.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	api := &fakeAPI{}
	_, err := Execute(context.Background(), api, r, fastOptions(out))
	if err == nil || !strings.Contains(err.Error(), "already holds a run") {
		t.Fatalf("error %v", err)
	}
	if len(api.applied) != 0 {
		t.Fatal("applied to the cluster despite the outputs problem")
	}
}

func TestUnreachableClusterBeforeAnyPod(t *testing.T) {
	r := testRun(t, hubLeavesComposition)
	api := &fakeAPI{checkErr: errors.New("the cluster of k is not reachable")}
	if _, err := Execute(context.Background(), api, r, fastOptions(t.TempDir())); err == nil || !strings.Contains(err.Error(), "not reachable") {
		t.Fatalf("error %v", err)
	}
	if len(api.applied) != 0 {
		t.Fatal("applied to an unreachable cluster")
	}
}

func TestKubectlMissing(t *testing.T) {
	_, err := NewKubectl("/nonexistent/kubectl", "", "")
	if err == nil || !strings.Contains(err.Error(), `"/nonexistent/kubectl" not found`) || !strings.Contains(err.Error(), "-kubectl") {
		t.Fatalf("error %v", err)
	}
	if _, err := NewKubectl("sh", "/nonexistent/kubeconfig", ""); err == nil || !strings.Contains(err.Error(), "kubeconfig") {
		t.Fatalf("error %v", err)
	}
}

// A real kubectl against a port nothing listens on: the error says the cluster is not
// reachable, quickly.
func TestKubectlUnreachable(t *testing.T) {
	path, err := exec.LookPath("kubectl")
	if err != nil {
		if p := filepath.Join("..", ".k8s", "bin", "kubectl"); fileExists(p) {
			path = p
		} else {
			t.Skip("no kubectl here")
		}
	}
	kc := filepath.Join(t.TempDir(), "kubeconfig")
	cfg := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: 'https://127.0.0.1:1'}\nusers:\n- name: u\n  user: {token: x}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\n"
	if err := os.WriteFile(kc, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	k, err := NewKubectl(path, kc, "")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = k.Check(ctx)
	if err == nil || !strings.Contains(err.Error(), "is not reachable") || !strings.Contains(err.Error(), kc) {
		t.Fatalf("error %v", err)
	}
}

const successEvent = `{"ts":2,"msg":"","event":{"success_event":{"group":"g"}}}` + "\n"

func TestInstanceOutcome(t *testing.T) {
	for log, want := range map[string]string{
		"":           OutcomeNone,
		successEvent: OutcomeSuccess,
		`{"event":{"crash_event":{"error":"boom","stacktrace":"x"}}}`:               OutcomeCrash,
		`{"event":{"failure_event":{"error":"e"}}}` + "\n" + successEvent:           OutcomeSuccess,
		successEvent + `{"event":{"failure_event":{"error":"late"}}}`:               OutcomeFailure,
		`not json "success_event"` + "\n" + `{"event":{"message_event":{"m":"x"}}}`: OutcomeNone,
	} {
		if got, _ := instanceOutcome(log); got != want {
			t.Errorf("%q: %s, want %s", log, got, want)
		}
	}
}

func fileExists(p string) bool { _, err := os.Stat(p); return err == nil }

package cluster

import (
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/streamsim/streamsim/sim/runner"
)

// The manifest types are the few fields of the Kubernetes objects a run writes, with the API's
// JSON names: `kubectl apply` reads them as it reads YAML.

type Object struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Metadata   Metadata `json:"metadata"`
	Spec       any      `json:"spec,omitempty"`
}

type Metadata struct {
	Name        string            `json:"name,omitempty"`
	Namespace   string            `json:"namespace,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
}

type JobSpec struct {
	CompletionMode        string      `json:"completionMode"`
	Completions           int         `json:"completions"`
	Parallelism           int         `json:"parallelism"`
	BackoffLimitPerIndex  int         `json:"backoffLimitPerIndex"`
	MaxFailedIndexes      int         `json:"maxFailedIndexes"`
	ActiveDeadlineSeconds int64       `json:"activeDeadlineSeconds"`
	Template              PodTemplate `json:"template"`
}

type DeploymentSpec struct {
	Replicas int         `json:"replicas"`
	Selector Selector    `json:"selector"`
	Template PodTemplate `json:"template"`
}

type Selector struct {
	MatchLabels map[string]string `json:"matchLabels"`
}

type ServiceSpec struct {
	Selector map[string]string `json:"selector"`
	Ports    []ServicePort     `json:"ports"`
}

type ServicePort struct {
	Name       string `json:"name"`
	Port       int    `json:"port"`
	TargetPort int    `json:"targetPort"`
}

type PodTemplate struct {
	Metadata Metadata `json:"metadata"`
	Spec     PodSpec  `json:"spec"`
}

type PodSpec struct {
	RestartPolicy                 string      `json:"restartPolicy"`
	HostNetwork                   bool        `json:"hostNetwork,omitempty"`
	DNSPolicy                     string      `json:"dnsPolicy,omitempty"`
	EnableServiceLinks            bool        `json:"enableServiceLinks"`
	AutomountServiceAccountToken  bool        `json:"automountServiceAccountToken"`
	TerminationGracePeriodSeconds int64       `json:"terminationGracePeriodSeconds"`
	Containers                    []Container `json:"containers"`
	Volumes                       []Volume    `json:"volumes,omitempty"`
}

type Container struct {
	Name            string          `json:"name"`
	Image           string          `json:"image"`
	ImagePullPolicy string          `json:"imagePullPolicy"`
	Command         []string        `json:"command,omitempty"`
	Env             []EnvVar        `json:"env,omitempty"`
	Resources       ResourceSpec    `json:"resources"`
	VolumeMounts    []VolumeMount   `json:"volumeMounts,omitempty"`
	ReadinessProbe  *Probe          `json:"readinessProbe,omitempty"`
	Ports           []ContainerPort `json:"ports,omitempty"`
}

type ContainerPort struct {
	ContainerPort int `json:"containerPort"`
}

type EnvVar struct {
	Name      string        `json:"name"`
	Value     string        `json:"value,omitempty"`
	ValueFrom *EnvVarSource `json:"valueFrom,omitempty"`
}

type EnvVarSource struct {
	FieldRef *FieldRef `json:"fieldRef,omitempty"`
}

type FieldRef struct {
	FieldPath string `json:"fieldPath"`
}

type ResourceSpec struct {
	Requests map[string]string `json:"requests,omitempty"`
	Limits   map[string]string `json:"limits,omitempty"`
}

type VolumeMount struct {
	Name        string `json:"name"`
	MountPath   string `json:"mountPath"`
	SubPathExpr string `json:"subPathExpr,omitempty"`
}

type Volume struct {
	Name                  string          `json:"name"`
	HostPath              *HostPathSource `json:"hostPath,omitempty"`
	PersistentVolumeClaim *ClaimSource    `json:"persistentVolumeClaim,omitempty"`
	EmptyDir              *EmptyDirSource `json:"emptyDir,omitempty"`
}

type HostPathSource struct {
	Path string `json:"path"`
	Type string `json:"type"`
}

type ClaimSource struct {
	ClaimName string `json:"claimName"`
}

type EmptyDirSource struct{}

type Probe struct {
	TCPSocket     *TCPSocketAction `json:"tcpSocket"`
	PeriodSeconds int              `json:"periodSeconds"`
}

type TCPSocketAction struct {
	Host string `json:"host,omitempty"`
	Port int    `json:"port"`
}

// List is what `kubectl apply -f -` reads: the run's objects in order.
type List struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Items      []Object `json:"items"`
}

// The sync service's environment (the build in scripts/k8s.sh patches sync-service v0.1.0,
// which listens on :5050 only, to read these).
const (
	EnvSyncListenHost = "SYNC_LISTEN_HOST"
	EnvSyncListenPort = "SYNC_LISTEN_PORT"
)

func (r *Run) labels(component, group string) map[string]string {
	l := map[string]string{LabelApp: AppName, LabelRun: r.ID, LabelComponent: component}
	if group != "" {
		l[LabelGroup] = group
	}
	return l
}

// SyncObjects are the sync service's Deployment and Service.
func (r *Run) SyncObjects() []Object {
	labels := r.labels(ComponentSync, "")
	sel := map[string]string{LabelRun: r.ID, LabelComponent: ComponentSync}
	host := "0.0.0.0"
	if r.HostNetwork {
		host = "127.0.0.1" // the node's loopback: nothing else reaches it
	}
	pod := PodSpec{
		RestartPolicy:                 "Always",
		HostNetwork:                   r.HostNetwork,
		EnableServiceLinks:            false,
		TerminationGracePeriodSeconds: 2,
		Containers: []Container{{
			Name:            "sync-service",
			Image:           r.SyncImage,
			ImagePullPolicy: r.PullPolicy,
			Env: []EnvVar{
				{Name: EnvSyncListenHost, Value: host},
				{Name: EnvSyncListenPort, Value: strconv.Itoa(r.SyncPort)},
			},
			Resources: ResourceSpec{
				Requests: map[string]string{"cpu": "50m", "memory": "64Mi"},
				Limits:   map[string]string{"memory": "1Gi"},
			},
			Ports:          []ContainerPort{{ContainerPort: r.SyncPort}},
			ReadinessProbe: &Probe{TCPSocket: &TCPSocketAction{Port: r.SyncPort}, PeriodSeconds: 1},
		}},
	}
	if r.HostNetwork {
		pod.DNSPolicy = "ClusterFirstWithHostNet"
		pod.Containers[0].ReadinessProbe.TCPSocket.Host = "127.0.0.1"
	}
	dep := Object{
		APIVersion: "apps/v1", Kind: "Deployment",
		Metadata: Metadata{Name: r.SyncName(), Namespace: r.Namespace, Labels: labels},
		Spec: DeploymentSpec{
			Replicas: 1,
			Selector: Selector{MatchLabels: sel},
			Template: PodTemplate{Metadata: Metadata{Labels: labels}, Spec: pod},
		},
	}
	svc := Object{
		APIVersion: "v1", Kind: "Service",
		Metadata: Metadata{Name: r.SyncName(), Namespace: r.Namespace, Labels: labels},
		Spec: ServiceSpec{
			Selector: sel,
			Ports:    []ServicePort{{Name: "sync", Port: r.SyncPort, TargetPort: r.SyncPort}},
		},
	}
	return []Object{dep, svc}
}

// syncHost is where instances reach the sync service.
func (r *Run) syncHost() string {
	if r.HostNetwork {
		return "127.0.0.1"
	}
	return r.SyncName() + "." + r.Namespace + ".svc"
}

// Job is group g's Indexed Job: Instances pods, all at once (they meet at barriers), none
// retried (a retried instance would rejoin a run whose barriers have passed). A failed index
// does not fail the Job early (backoffLimitPerIndex 0, every index may fail): with a plain
// backoffLimit the Job controller would kill the group's other pods at the first failure,
// and their outputs with them.
func (r *Run) Job(g Group) Object {
	labels := r.labels(ComponentInstance, g.ID)
	res := r.resources(g)
	env := []EnvVar{
		// First: later values refer to it as $(STREAMSIM_JOB_INDEX).
		{Name: "STREAMSIM_JOB_INDEX", ValueFrom: &EnvVarSource{FieldRef: &FieldRef{FieldPath: "metadata.annotations['" + indexAnnotation + "']"}}},
		{Name: "TEST_PLAN", Value: r.Plan},
		{Name: "TEST_CASE", Value: r.Case},
		{Name: "TEST_RUN", Value: r.ID},
		{Name: "TEST_GROUP_ID", Value: g.ID},
		{Name: "TEST_GROUP_INSTANCE_COUNT", Value: strconv.Itoa(g.Instances)},
		{Name: "TEST_INSTANCE_COUNT", Value: strconv.Itoa(r.Instances())},
		{Name: "TEST_INSTANCE_PARAMS", Value: packParams(r.instanceParams(g))},
		{Name: "TEST_INSTANCE_ROLE", Value: ""},
		{Name: "TEST_OUTPUTS_PATH", Value: OutputsMount},
		{Name: "TEST_TEMP_PATH", Value: "/tmp"},
		{Name: "TEST_SIDECAR", Value: "false"},
		{Name: "TEST_DISABLE_METRICS", Value: "true"},
		{Name: "TEST_START_TIME", Value: r.Started.UTC().Format(time.RFC3339)},
		{Name: "SYNC_SERVICE_HOST", Value: r.syncHost()},
		{Name: "SYNC_SERVICE_PORT", Value: strconv.Itoa(r.SyncPort)},
	}
	if !r.HostNetwork {
		// The SDK without a sidecar answers 127.0.0.1 as the data-network IP: on a pod
		// network the node must listen on the pod's own address.
		env = append(env, EnvVar{Name: runner.EnvDataIP, ValueFrom: &EnvVarSource{FieldRef: &FieldRef{FieldPath: "status.podIP"}}})
	}
	outputs := Volume{Name: "outputs"}
	if r.OutputsHostPath != "" {
		outputs.HostPath = &HostPathSource{Path: r.OutputsHostPath, Type: "DirectoryOrCreate"}
	} else {
		outputs.PersistentVolumeClaim = &ClaimSource{ClaimName: r.OutputsClaim}
	}
	pod := PodSpec{
		RestartPolicy:                 "Never",
		HostNetwork:                   r.HostNetwork,
		EnableServiceLinks:            false,
		AutomountServiceAccountToken:  false,
		TerminationGracePeriodSeconds: 5,
		Containers: []Container{{
			Name:            "instance",
			Image:           r.Image,
			ImagePullPolicy: r.PullPolicy,
			Command:         []string{"/plan"},
			Env:             env,
			Resources: ResourceSpec{
				Requests: map[string]string{"cpu": res.CPU, "memory": res.Memory},
				Limits:   map[string]string{"memory": res.MemoryLimit},
			},
			VolumeMounts: []VolumeMount{
				// Each instance sees only <outputs>/<group>/<index>; the kubelet makes it.
				{Name: "outputs", MountPath: OutputsMount, SubPathExpr: "$(TEST_GROUP_ID)/$(STREAMSIM_JOB_INDEX)"},
				{Name: "tmp", MountPath: "/tmp"},
			},
		}},
		Volumes: []Volume{outputs, {Name: "tmp", EmptyDir: &EmptyDirSource{}}},
	}
	if r.HostNetwork {
		pod.DNSPolicy = "ClusterFirstWithHostNet"
	}
	return Object{
		APIVersion: "batch/v1", Kind: "Job",
		Metadata: Metadata{Name: r.JobName(g.ID), Namespace: r.Namespace, Labels: labels},
		Spec: JobSpec{
			CompletionMode:        "Indexed",
			Completions:           g.Instances,
			Parallelism:           g.Instances,
			BackoffLimitPerIndex:  0,
			MaxFailedIndexes:      g.Instances,
			ActiveDeadlineSeconds: int64((r.Deadline + time.Second - 1) / time.Second),
			Template:              PodTemplate{Metadata: Metadata{Labels: labels}, Spec: pod},
		},
	}
}

// Namespace is the run's namespace object (applying it again is a no-op).
func (r *Run) NamespaceObject() Object {
	return Object{APIVersion: "v1", Kind: "Namespace", Metadata: Metadata{Name: r.Namespace, Labels: map[string]string{LabelApp: AppName}}}
}

// Manifests are every object of the run, in the order they are applied: namespace, sync
// service, one Job per group.
func (r *Run) Manifests() []Object {
	objs := []Object{r.NamespaceObject()}
	objs = append(objs, r.SyncObjects()...)
	for _, g := range r.Groups {
		objs = append(objs, r.Job(g))
	}
	return objs
}

// MarshalList encodes objects as one v1 List, the input of `kubectl apply -f -`.
func MarshalList(objs []Object) ([]byte, error) {
	b, err := json.MarshalIndent(List{APIVersion: "v1", Kind: "List", Items: objs}, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("manifests: %w", err)
	}
	return append(b, '\n'), nil
}

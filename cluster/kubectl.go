package cluster

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"time"
)

// API is what a run needs from a cluster. Kubectl implements it; tests use a fake.
type API interface {
	// Check tells whether the cluster answers, with its server version.
	Check(ctx context.Context) (string, error)
	Apply(ctx context.Context, manifests []byte) error
	Pods(ctx context.Context, namespace, selector string) ([]Pod, error)
	Nodes(ctx context.Context) ([]Node, error)
	// AllPods are every pod in every namespace (what the nodes already hold).
	AllPods(ctx context.Context) ([]Pod, error)
	Logs(ctx context.Context, namespace, pod string, tail int) (string, error)
	// Delete deletes every object of the kinds matching the selector, not waiting.
	Delete(ctx context.Context, namespace, selector string) error
	// Stats is the node's kubelet summary (per-pod CPU and memory), if the cluster serves it.
	Stats(ctx context.Context, node string) (*NodeStats, error)
}

// Pod is the part of a pod's status a run reads.
type Pod struct {
	Metadata struct {
		Name        string            `json:"name"`
		Namespace   string            `json:"namespace"`
		UID         string            `json:"uid"`
		Labels      map[string]string `json:"labels"`
		Annotations map[string]string `json:"annotations"`
	} `json:"metadata"`
	Spec struct {
		NodeName   string `json:"nodeName"`
		Containers []struct {
			Resources ResourceSpec `json:"resources"`
		} `json:"containers"`
	} `json:"spec"`
	Status struct {
		Phase      string `json:"phase"`
		Reason     string `json:"reason"`
		Message    string `json:"message"`
		Conditions []struct {
			Type    string `json:"type"`
			Status  string `json:"status"`
			Reason  string `json:"reason"`
			Message string `json:"message"`
		} `json:"conditions"`
		ContainerStatuses []ContainerStatus `json:"containerStatuses"`
	} `json:"status"`
}

type ContainerStatus struct {
	Name  string `json:"name"`
	State struct {
		Waiting *struct {
			Reason  string `json:"reason"`
			Message string `json:"message"`
		} `json:"waiting"`
		Running *struct {
			StartedAt string `json:"startedAt"`
		} `json:"running"`
		Terminated *struct {
			ExitCode   int    `json:"exitCode"`
			Reason     string `json:"reason"`
			Message    string `json:"message"`
			StartedAt  string `json:"startedAt"`
			FinishedAt string `json:"finishedAt"`
		} `json:"terminated"`
	} `json:"state"`
}

// Node is the part of a node a run reads.
type Node struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Unschedulable bool `json:"unschedulable"`
		Taints        []struct {
			Key    string `json:"key"`
			Effect string `json:"effect"`
		} `json:"taints"`
	} `json:"spec"`
	Status struct {
		Allocatable map[string]string `json:"allocatable"`
		Images      []struct {
			Names []string `json:"names"`
		} `json:"images"`
		Conditions []struct {
			Type   string `json:"type"`
			Status string `json:"status"`
		} `json:"conditions"`
	} `json:"status"`
}

// NodeStats is the part of the kubelet's /stats/summary a run reads.
type NodeStats struct {
	Pods []struct {
		PodRef struct {
			Name      string `json:"name"`
			Namespace string `json:"namespace"`
		} `json:"podRef"`
		CPU *struct {
			UsageCoreNanoSeconds uint64 `json:"usageCoreNanoSeconds"`
		} `json:"cpu"`
		Memory *struct {
			WorkingSetBytes uint64 `json:"workingSetBytes"`
		} `json:"memory"`
	} `json:"pods"`
}

// Kubectl drives a cluster through the kubectl command.
type Kubectl struct {
	Path       string // the kubectl binary
	Kubeconfig string // empty: kubectl's own default
	Context    string // empty: the kubeconfig's current context
}

// NewKubectl finds kubectl (a path, or a name looked up on PATH) and checks it runs.
func NewKubectl(path, kubeconfig, kcontext string) (*Kubectl, error) {
	if path == "" {
		path = "kubectl"
	}
	p, err := exec.LookPath(path)
	if err != nil {
		return nil, fmt.Errorf("kubectl: %q not found (install kubectl 1.33 or later, or pass -kubectl with its path; scripts/k8s.sh build makes one in .k8s/bin): %w", path, err)
	}
	if kubeconfig != "" {
		if _, err := os.Stat(kubeconfig); err != nil {
			return nil, fmt.Errorf("kubeconfig: %w (scripts/k8s.sh up writes .k8s/state/kubeconfig)", err)
		}
	}
	return &Kubectl{Path: p, Kubeconfig: kubeconfig, Context: kcontext}, nil
}

func (k *Kubectl) run(ctx context.Context, stdin []byte, args ...string) ([]byte, error) {
	var pre []string
	if k.Kubeconfig != "" {
		pre = append(pre, "--kubeconfig", k.Kubeconfig)
	}
	if k.Context != "" {
		pre = append(pre, "--context", k.Context)
	}
	cmd := exec.CommandContext(ctx, k.Path, append(pre, args...)...)
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return stdout.Bytes(), fmt.Errorf("kubectl %s: %s", strings.Join(args, " "), lastLines(msg, 3))
	}
	return stdout.Bytes(), nil
}

// Check asks the server for its version (a short timeout: an unreachable cluster should not
// hang the run).
func (k *Kubectl) Check(ctx context.Context) (string, error) {
	out, err := k.run(ctx, nil, "version", "-o", "json", "--request-timeout=10s")
	var v struct {
		Server *struct {
			GitVersion string `json:"gitVersion"`
		} `json:"serverVersion"`
	}
	if jerr := json.Unmarshal(out, &v); jerr == nil && v.Server != nil && err == nil {
		return v.Server.GitVersion, nil
	}
	where := "the kubeconfig's cluster"
	if k.Kubeconfig != "" {
		where = "the cluster of " + k.Kubeconfig
	}
	if err == nil {
		err = errors.New("no server version in the answer")
	}
	return "", fmt.Errorf("%s is not reachable (is it up? scripts/k8s.sh up starts one here): %w", where, err)
}

func (k *Kubectl) Apply(ctx context.Context, manifests []byte) error {
	_, err := k.run(ctx, manifests, "apply", "-f", "-")
	return err
}

func (k *Kubectl) Pods(ctx context.Context, namespace, selector string) ([]Pod, error) {
	return k.pods(ctx, "-n", namespace, "-l", selector)
}

func (k *Kubectl) AllPods(ctx context.Context) ([]Pod, error) { return k.pods(ctx, "-A") }

func (k *Kubectl) pods(ctx context.Context, args ...string) ([]Pod, error) {
	out, err := k.run(ctx, nil, append([]string{"get", "pods", "-o", "json"}, args...)...)
	if err != nil {
		return nil, err
	}
	var l struct {
		Items []Pod `json:"items"`
	}
	if err := json.Unmarshal(out, &l); err != nil {
		return nil, fmt.Errorf("kubectl get pods: %w", err)
	}
	return l.Items, nil
}

func (k *Kubectl) Nodes(ctx context.Context) ([]Node, error) {
	out, err := k.run(ctx, nil, "get", "nodes", "-o", "json")
	if err != nil {
		return nil, err
	}
	var l struct {
		Items []Node `json:"items"`
	}
	if err := json.Unmarshal(out, &l); err != nil {
		return nil, fmt.Errorf("kubectl get nodes: %w", err)
	}
	return l.Items, nil
}

func (k *Kubectl) Logs(ctx context.Context, namespace, pod string, tail int) (string, error) {
	args := []string{"logs", "-n", namespace, pod}
	if tail > 0 {
		args = append(args, fmt.Sprintf("--tail=%d", tail))
	}
	out, err := k.run(ctx, nil, args...)
	return string(out), err
}

func (k *Kubectl) Delete(ctx context.Context, namespace, selector string) error {
	_, err := k.run(ctx, nil, "delete", "job,deployment,service,pod", "-n", namespace, "-l", selector,
		"--ignore-not-found", "--wait=false", "--grace-period=2")
	return err
}

// Stats reads the kubelet's summary through the API server's node proxy. The API server does
// not proxy to loopback addresses, so a node that is this machine's loopback (the one-node
// cluster of scripts/k8s.sh, whose kubelet serves the summary to anonymous callers on
// loopback only) is asked directly.
func (k *Kubectl) Stats(ctx context.Context, node string) (*NodeStats, error) {
	out, err := k.run(ctx, nil, "get", "--raw", "/api/v1/nodes/"+node+"/proxy/stats/summary")
	if err != nil {
		ip := net.ParseIP(node)
		if ip == nil || !ip.IsLoopback() {
			return nil, err
		}
		if out, err = kubeletSummary(ctx, node); err != nil {
			return nil, err
		}
	}
	var s NodeStats
	if err := json.Unmarshal(out, &s); err != nil {
		return nil, fmt.Errorf("stats summary of %s: %w", node, err)
	}
	return &s, nil
}

func kubeletSummary(ctx context.Context, node string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+net.JoinHostPort(node, "10250")+"/stats/summary", nil)
	if err != nil {
		return nil, err
	}
	// The kubelet's serving certificate is self-signed; the address is this machine's loopback.
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("kubelet summary on %s: %w", node, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("kubelet summary on %s: %w", node, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("kubelet summary on %s: %s: %s", node, resp.Status, lastLines(string(b), 2))
	}
	return b, nil
}

// lastLines is the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

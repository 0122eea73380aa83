package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

type k8sManifest struct {
	Items []struct {
		Kind     string `json:"kind"`
		Metadata struct {
			Name string `json:"name"`
		} `json:"metadata"`
		Spec struct {
			Completions int `json:"completions"`
			Template    struct {
				Spec struct {
					HostNetwork bool `json:"hostNetwork"`
					Containers  []struct {
						Env []struct {
							Name  string `json:"name"`
							Value string `json:"value"`
						} `json:"env"`
					} `json:"containers"`
				} `json:"spec"`
			} `json:"template"`
		} `json:"spec"`
	} `json:"items"`
}

func k8sManifests(t *testing.T, args ...string) k8sManifest {
	t.Helper()
	var out, errs bytes.Buffer
	if err := runK8s(append([]string{"manifests", "-run-id", "t1"}, args...), &out, &errs); err != nil {
		t.Fatalf("%v\n%s", err, errs.String())
	}
	var m k8sManifest
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func jobEnv(m k8sManifest, job string) map[string]string {
	env := map[string]string{}
	for _, it := range m.Items {
		if it.Kind == "Job" && it.Metadata.Name == job {
			for _, e := range it.Spec.Template.Spec.Containers[0].Env {
				env[e.Name] = e.Value
			}
		}
	}
	return env
}

func TestK8sManifestsFromComposition(t *testing.T) {
	m := k8sManifests(t, "-host-network", "-sync-port", "4321", "../../compositions/mesh-k8s-ci.toml")
	var jobs []string
	for _, it := range m.Items {
		if it.Kind == "Job" {
			jobs = append(jobs, it.Metadata.Name)
			if it.Spec.Completions != 24 || !it.Spec.Template.Spec.HostNetwork {
				t.Errorf("job %s: %d completions, host network %v", it.Metadata.Name, it.Spec.Completions, it.Spec.Template.Spec.HostNetwork)
			}
		}
	}
	if strings.Join(jobs, ",") != "ss-t1-nodes" {
		t.Fatalf("jobs %v", jobs)
	}
	env := jobEnv(m, "ss-t1-nodes")
	if env["TEST_CASE"] != "mesh" || env["SYNC_SERVICE_PORT"] != "4321" || !strings.Contains(env["TEST_INSTANCE_PARAMS"], "compressed_share=0.5|") {
		t.Fatalf("env %v", env)
	}
}

func TestK8sManifestsFromRunFlags(t *testing.T) {
	m := k8sManifests(t, "--scenario", "hub-leaves", "--leaves", "plain,zstd", "--publishers", "2", "--slots", "3")
	var jobs []string
	for _, it := range m.Items {
		if it.Kind == "Job" {
			jobs = append(jobs, it.Metadata.Name)
		}
	}
	if strings.Join(jobs, ",") != "ss-t1-publishers,ss-t1-hub,ss-t1-leaf-0-plain,ss-t1-leaf-1-zstd" {
		t.Fatalf("jobs %v", jobs)
	}
	if env := jobEnv(m, "ss-t1-leaf-1-zstd"); !strings.HasPrefix(env["TEST_INSTANCE_PARAMS"], "codec=zstd|") || !strings.Contains(env["TEST_INSTANCE_PARAMS"], "|slots=3|") || env["TEST_INSTANCE_COUNT"] != "5" {
		t.Fatalf("leaf env %v", env)
	}
}

func TestK8sBadInput(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "-kubectl", "/nonexistent/kubectl", "-sync-port", "5050", "../../compositions/hub-leaves-k8s-ci.toml"}, `"/nonexistent/kubectl" not found`},
		{[]string{"manifests", "../../compositions/nope.toml"}, "no such file"},
		{[]string{"manifests", "--scenario", "mesh", "--codecs", "plain,zstd"}, "2 runs"},
		{[]string{"manifests", "-pull-policy", "Sometimes", "../../compositions/hub-leaves-k8s-ci.toml"}, "pull policy"},
		{[]string{"manifests", "-set", "codec=lz4", "../../compositions/mesh-k8s-ci.toml"}, "codec"},
		{[]string{"bogus"}, "unknown k8s subcommand"},
	} {
		var out, errs bytes.Buffer
		err := runK8s(c.args, &out, &errs)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want it to mention %q", c.args, err, c.want)
		}
	}
}

package cluster

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"text/template"

	"github.com/BurntSushi/toml"
)

// composition is the part of a Testground composition file (v0.6.0) a cluster run reads.
type composition struct {
	Metadata struct {
		Name string `toml:"name"`
	} `toml:"metadata"`
	Global struct {
		Plan   string `toml:"plan"`
		Case   string `toml:"case"`
		Runner string `toml:"runner"`
		Run    struct {
			TestParams map[string]string `toml:"test_params"`
		} `toml:"run"`
	} `toml:"global"`
	Groups []struct {
		ID        string `toml:"id"`
		Instances struct {
			Count int `toml:"count"`
		} `toml:"instances"`
		Resources struct {
			CPU         string `toml:"cpu"`
			Memory      string `toml:"memory"`
			MemoryLimit string `toml:"memory_limit"`
		} `toml:"resources"`
		Run struct {
			TestParams map[string]string `toml:"test_params"`
		} `toml:"run"`
	} `toml:"groups"`
	Runs []map[string]any `toml:"runs"`
}

// ReadComposition reads a Testground composition file into a Run's plan, case, parameters
// and groups. The file is a Go template first, as Testground treats it ({{ $.Env.NAME }}
// reads an environment variable). Builder and runner are Testground's and are ignored: the
// image and the cluster are the caller's. Sweeps ([[runs]]) are refused: run one point per
// composition.
func ReadComposition(path string) (*Run, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("composition: %w", err)
	}
	return parseComposition(path, raw, environ())
}

func environ() map[string]string {
	m := map[string]string{}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

func parseComposition(path string, raw []byte, env map[string]string) (*Run, error) {
	tpl, err := template.New(path).Option("missingkey=zero").Parse(string(raw))
	if err != nil {
		return nil, fmt.Errorf("composition %s: template: %w", path, err)
	}
	var buf bytes.Buffer
	if err := tpl.Execute(&buf, map[string]any{"Env": env}); err != nil {
		return nil, fmt.Errorf("composition %s: template: %w", path, err)
	}
	var c composition
	md, err := toml.Decode(buf.String(), &c)
	if err != nil {
		return nil, fmt.Errorf("composition %s: %w (test_params values must be TOML strings)", path, err)
	}
	if und := md.Undecoded(); len(und) > 0 {
		// Only keys under a table we read matter; Testground's own (builder, build_config,
		// disable_metrics…) are fine to ignore.
		for _, k := range und {
			if len(k) >= 3 && k[0] == "groups" && k[1] == "resources" {
				return nil, fmt.Errorf("composition %s: unknown key %s (resources: cpu, memory, memory_limit)", path, k)
			}
		}
	}
	if len(c.Runs) > 0 {
		return nil, fmt.Errorf("composition %s: has [[runs]] (a sweep); streamsim k8s runs one composition point: write one composition per run", path)
	}
	if c.Global.Case == "" {
		return nil, fmt.Errorf("composition %s: global.case is not set", path)
	}
	if len(c.Groups) == 0 {
		return nil, fmt.Errorf("composition %s: no [[groups]]", path)
	}
	r := &Run{
		Name:   c.Metadata.Name,
		Plan:   c.Global.Plan,
		Case:   c.Global.Case,
		Params: map[string]string{},
	}
	if r.Plan == "" {
		r.Plan = "streamsim"
	}
	for k, v := range c.Global.Run.TestParams {
		r.Params[k] = v
	}
	for _, g := range c.Groups {
		if g.Instances.Count < 1 {
			return nil, fmt.Errorf("composition %s: group %q: instances.count %d (at least 1; percentages are not supported)", path, g.ID, g.Instances.Count)
		}
		r.Groups = append(r.Groups, Group{
			ID:        g.ID,
			Instances: g.Instances.Count,
			Params:    g.Run.TestParams,
			Resources: Resources{CPU: g.Resources.CPU, Memory: g.Resources.Memory, MemoryLimit: g.Resources.MemoryLimit},
		})
	}
	return r, nil
}

package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/streamsim/streamsim/analysis"
	"github.com/streamsim/streamsim/sim/runner"
	"github.com/streamsim/streamsim/topology"
	"github.com/streamsim/streamsim/workload"
)

// A scenario registered here, and known to no other file, runs through `streamsim run
// --scenario`, is listed by `streamsim scenarios` with its parameter, and is read back by
// `streamsim report` (with the generic per-node report, as it names no report kind).
func TestThrowawayScenarioThroughTheCLI(t *testing.T) {
	const name, param = "throwaway-fanin", "fanin_receivers"
	sc := &runner.Scenario{
		Name:    name,
		Summary: "one publisher, receivers dialling it",
		Params:  []runner.Param{{Name: param, Type: "int", Unit: "instances", Default: "2", Desc: "receivers (the group's other instances)"}},
		// Instance 0 publishes every message through fanout; the others subscribe to the
		// profile's topics and check what they receive.
		MinInstances: 2, MaxInstances: 8, DefaultInstances: 3,
		Role: func(string) topology.Role { return topology.RoleNode },
		Check: func(p *runner.Params, groups map[string]int) error {
			n, err := p.Int(param, 1)
			if err != nil {
				return err
			}
			if g, ok := groups["all"]; ok && g != n+1 {
				return fmt.Errorf("param %s is %d but group all has %d instances (want %d)", param, n, g, n+1)
			}
			return nil
		},
		Run: runner.NodeLifecycle(runner.NodeSpec{Plan: func(p *runner.Params, members []topology.Member) (*topology.Plan, error) {
			spec, err := topology.ClientProfile("spec")
			if err != nil {
				return nil, err
			}
			topics := p.Profile.Topics(workload.DefaultParams().ForkDigest)
			plan := &topology.Plan{Nodes: make([]topology.Node, len(members)), Observed: -1}
			pub := &plan.Nodes[0]
			*pub = topology.Node{Role: topology.RoleNode, Kind: "publisher", Client: spec, Publishes: true, WaitFor: map[string][]int{}}
			for i := 1; i < len(members); i++ {
				plan.Nodes[i] = topology.Node{Role: topology.RoleNode, Kind: "receiver", Client: spec, Topics: topics, Dial: []int{0}, Peers: []int{0}}
				pub.Peers = append(pub.Peers, i)
				for _, tp := range topics {
					pub.WaitFor[tp] = append(pub.WaitFor[tp], i)
				}
			}
			return plan, nil
		},
			Receiver: func(n *topology.Node) bool { return len(n.Topics) > 0 },
		}),
		Flags: runner.SingleRunFlags("all", 3),
	}
	runner.Register(sc)

	dir := t.TempDir()
	args := []string{"--scenario", name, "--instances", "3", "--profile", "default", "--slots", "1", "--time-scale", "6",
		"--validators", "4096", "--out", dir}
	if err := runRunCmd(args); err != nil {
		t.Fatalf("run: %v", err)
	}

	var list bytes.Buffer
	if err := listScenarios(nil, &list); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{name + ": one publisher", param, "--instances", "receivers (the group's other instances)"} {
		if !strings.Contains(list.String(), want) {
			t.Errorf("streamsim scenarios does not show %q:\n%s", want, list.String())
		}
	}

	var rep bytes.Buffer
	if err := runReport([]string{dir}, &rep); err != nil {
		t.Fatalf("report: %v\n%s", err, rep.String())
	}
	for _, want := range []string{name + ": 3 nodes", "all/1", "all/2", "result: OK"} {
		if !strings.Contains(rep.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, rep.String())
		}
	}
	// Every receiver got what was published (the generic report's check), and something was.
	var js bytes.Buffer
	if err := runReport([]string{"--json", dir}, &js); err != nil {
		t.Fatal(err)
	}
	var nodes analysis.NodesReport
	if err := json.Unmarshal(js.Bytes(), &nodes); err != nil {
		t.Fatal(err)
	}
	receivers := 0
	for _, n := range nodes.Nodes {
		if n.Expected < 0 {
			continue
		}
		receivers++
		if n.Expected == 0 || n.Received != n.Expected || n.InWire == 0 {
			t.Errorf("receiver %s/%d: received %d of %d messages, %d bytes in", n.Group, n.Instance, n.Received, n.Expected, n.InWire)
		}
	}
	if receivers != 2 {
		t.Errorf("%d receivers in the report, want 2", receivers)
	}

	// The HTML report has a section for it, listing its report's figures (a kind without a
	// section of its own), each bound to its JSON.
	page := filepath.Join(t.TempDir(), "report.html")
	if err := runReport([]string{"--html", page, dir}, &bytes.Buffer{}); err != nil {
		t.Fatalf("report --html: %v", err)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<h2>nodes: ", "every figure of the report&#39;s JSON", `data-path="nodes.1.received"`} {
		if !strings.Contains(string(html), want) {
			t.Errorf("the HTML report lacks %q", want)
		}
	}

	// A bad value of its parameter is a usage error naming it, before any node starts.
	err = runRunCmd([]string{"--scenario", name, "--set", param + "=zero", "--out", t.TempDir()})
	var ue usageError
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), "--set "+param) {
		t.Errorf("bad %s: %v, want a usage error naming --set %s", param, err, param)
	}
	// An unknown scenario lists the registered ones, this one among them.
	err = runRunCmd([]string{"--scenario", "no-such-scenario"})
	if !errors.As(err, &ue) || !strings.Contains(err.Error(), name) {
		t.Errorf("unknown scenario: %v, want a usage error listing %s", err, name)
	}
}

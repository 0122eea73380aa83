// Command plans is streamsim's Testground entry point: the table of test cases, read from
// the runner's scenario registry. `streamsim run` runs the same scenarios in-process, so the plan
// holds wiring only.
package main

import (
	"net"
	"net/http"
	"os"

	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/testground/sdk-go/run"

	_ "github.com/streamsim/streamsim/scenarios/all" // registers every scenario
	"github.com/streamsim/streamsim/sim/runner"
)

// testcases maps manifest.toml's test case names to their functions: every registered
// scenario.
func testcases() map[string]interface{} {
	out := map[string]interface{}{}
	for _, s := range runner.Scenarios() {
		out[s.Name] = s.TestCase()
	}
	return out
}

func main() {
	serveDiagnosticsOnLoopback()
	run.InvokeMap(testcases())
}

// serveDiagnosticsOnLoopback binds the SDK's diagnostics listener (pprof and Prometheus
// metrics) to loopback under local:exec. The SDK otherwise listens on 0.0.0.0:6060 in every
// instance, and local:exec instances share the host's network. In a container (a sidecar
// runner such as cluster:k8s) the SDK's own listener is kept.
func serveDiagnosticsOnLoopback() {
	if os.Getenv("TEST_SIDECAR") == "true" {
		return
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return // the SDK sets up its own listener
	}
	http.DefaultServeMux.Handle("/metrics", promhttp.Handler())
	run.HTTPListenAddr = l.Addr().String()
	go func() { _ = http.Serve(l, nil) }()
}

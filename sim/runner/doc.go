// Package runner runs scenarios: the registry that the CLI, the Testground plan and the
// reports read, typed parameters parsed once per group, and the lifecycle of an instance.
//
// # Scenarios
//
// A Scenario (scenario.go) is a value: name, parameters, instance bounds, group → role, a
// parameter check, and Run, what an instance does. Register adds it (each scenario in its
// folder under scenarios/, listed in scenarios/all); Lookup and Scenarios read the registry.
//
// The runner parses an instance's parameters (Params: the common ones, then the scenario's
// own through Scenario.Parse), builds the run's network once (package network: TCP on the
// data address for a Testground or Kubernetes instance, TCP on loopback or a simulated
// network in a synctest bubble for an embedded run) and hands both to Run in an Env with the
// instance's place in the run, its outputs directory and the summary it fills.
//
// NodeLifecycle is the Run of a scenario whose every instance is one node (hub-leaves, the
// mesh): host, address exchange over the sync service, the scenario's plan (NodeSpec), node,
// dial, subscribe, wait for subscriptions, barriers, a failing instance announcing its
// failure, publishing the workload on its schedule (traffic.go, each message by the member
// Plan.Origin names), receiving and checking against what was published on the node's topics,
// liveness and fault schedules, resource samples, summary.json and results.out. A scenario
// that runs a network of its own in one instance (the neighbourhood) ends with Env.Finish.
//
// Embedded runs every instance of a scenario in this process, each with its own RunEnv and
// outputs directory <out>/<group>/<instance>/, sharing one in-memory sync client.
package runner

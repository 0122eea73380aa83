// Package analysis turns what runs wrote (result.NodeSummary and the message logs) into
// reports: the tables `streamsim run` and `streamsim report` print and their JSON.
//
// Files by concern:
//
//   - kinds.go: the registry of report kinds a scenario names (runner.Scenario.Report), the
//     Report interface, and the generic per-node report every scenario gets;
//   - verdict.go: the Verdict every report ends with (checks, notes, build, footer, JSON);
//   - hubleaves.go, hubleaves_runs.go: the live check (kind live-check);
//   - mesh.go, mesh_ab.go, latency_chart.go: the gossip mesh and its A/B (kind gossip-mesh);
//   - faults.go, soak.go: reliability verdicts shared by every run report;
//   - hubleaves_html.go, mesh_html.go: those kinds' sections of the HTML report (Kind.Section).
//
// Offline replay of recorded streams (streamsim sweep, report kind sweep) is analysis/replay;
// the plotting helpers every PNG/SVG chart shares are analysis/chart; the HTML report's page
// (sections, tables, inline SVG charts, figures bound to their JSON) is analysis/page.
package analysis

package cluster

// The tests read the scenario registry as the CLI does: every scenario linked.
import _ "github.com/streamsim/streamsim/scenarios/all"

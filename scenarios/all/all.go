// Package all links every scenario, so that each registers with the runner: the one list a
// new scenario is added to. The CLI and the Testground plan import it.
package all

import (
	_ "github.com/streamsim/streamsim/scenarios/hubleaves"
	_ "github.com/streamsim/streamsim/scenarios/mesh"
	_ "github.com/streamsim/streamsim/scenarios/neighbourhood"
)

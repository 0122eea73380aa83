package topology

import (
	"slices"
)

// Population kinds of a mesh (Node.Kind).
const (
	// KindObserved is the recorded node: the workload's all-subnets profile (64 attestation
	// subnets, 4 sync committee subnets, custody 8 columns of node id 0).
	KindObserved = "observed"
	// KindDefault is a non-validating node: 2 consecutive attestation subnets, no sync
	// committee subnet, custody 4 columns of its own node id.
	KindDefault = "default"
	// KindAllSubnets subscribes to every attestation and sync committee subnet and custodies
	// 8 columns of its own node id, like the recorded node.
	KindAllSubnets = "all-subnets"
	// KindSupernode custodies all 128 columns and otherwise subscribes like a default node
	// (2 attestation subnets, no sync committee subnet): custody follows the stake a node
	// holds, not its attestation subnets. (The workload's "supernode" profile, the
	// hub-leaves hub, also has every subnet: that is an all-subnets supernode.)
	KindSupernode = "supernode"
)

// MixKinds lists the kinds a population mix may name.
var MixKinds = []string{KindDefault, KindAllSubnets, KindSupernode}

// Apportion gives total items to the names by their shares with the largest-remainder
// method (ties to the earlier name in order) and lists them in that order. A name with a
// share above 0 that got nothing takes one from the name with the most, while that has
// more than one: a small share (the one all-subnets node of a 16-node mesh) must not vanish
// by rounding.
func Apportion(shares map[string]float64, order []string, total int) []string {
	sum := 0.0
	for _, name := range order {
		sum += shares[name]
	}
	counts := make([]int, len(order))
	rest := make([]float64, len(order))
	given := 0
	for i, name := range order {
		exact := 0.0
		if sum > 0 {
			exact = shares[name] / sum * float64(total)
		}
		counts[i] = int(exact)
		rest[i] = exact - float64(counts[i])
		given += counts[i]
	}
	byRest := make([]int, len(order))
	for i := range byRest {
		byRest[i] = i
	}
	slices.SortStableFunc(byRest, func(a, b int) int {
		switch {
		case rest[a] > rest[b]:
			return -1
		case rest[a] < rest[b]:
			return 1
		}
		return 0
	})
	for k := 0; given < total; k++ {
		counts[byRest[k%len(byRest)]]++
		given++
	}
	for i, name := range order {
		if shares[name] <= 0 || counts[i] > 0 {
			continue
		}
		most := 0
		for j := range counts {
			if counts[j] > counts[most] {
				most = j
			}
		}
		if counts[most] > 1 {
			counts[most]--
			counts[i]++
		}
	}
	out := make([]string, 0, total)
	for i, name := range order {
		for range counts[i] {
			out = append(out, name)
		}
	}
	return out
}

func UpTo(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i
	}
	return out
}

package topology

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/streamsim/streamsim/codec"
	"github.com/streamsim/streamsim/workload"
)

// Testground parameters of the mesh topology (ParseMeshParams). Each is optional.
const (
	ParamTopologySeed    = "topology_seed"    // seed of the graph, kinds, clients and codecs (default 1)
	ParamDegree          = "degree"           // target peers per ordinary node
	ParamObservedPeers   = "observed_peers"   // peers of the observed node
	ParamObservedClient  = "observed_client"  // client profile of the observed node
	ParamMix             = "mix"              // population shares, e.g. "default:0.94,all-subnets:0.02,supernode:0.04"
	ParamClients         = "clients"          // client shares, e.g. "lighthouse:0.6,prysm:0.23,teku:0.12,nimbus:0.03,lodestar:0.02"
	ParamCompressedShare = "compressed_share" // share of nodes offering codec, 0..1
	ParamCodec           = "codec"            // the compressed codec spec those nodes offer
)

// DefaultMeshNodes is the number of mesh nodes the defaults are chosen for (one process,
// two cores).
const DefaultMeshNodes = 48

// MeshParams describe a mesh population. Shares are fractions that sum to 1.
type MeshParams struct {
	// Seed seeds every random choice; different streams for the graph, kinds, clients and
	// codecs, so changing the client mix or the compressed share keeps the graph.
	Seed int64
	// Degree is the target number of peers of every node but the observed one. Peers found
	// for a node's subnets count towards it; nodes that many others chose as their subnet
	// peer (supernodes, all-subnets nodes) end above it, and the graph's last nodes may end
	// a little below it.
	Degree int
	// ObservedPeers is the observed node's number of peers (the recording's ~45), or every
	// other node when there are fewer (Plan.ObservedPeersCapped).
	ObservedPeers int
	// Observed is the index of the observed member (default 0: the first in (Group,
	// Instance) order).
	Observed int
	// ObservedClient is the observed node's client profile (the recording ran Teku).
	ObservedClient string
	// Mix is the population of the other nodes by kind (MixKinds).
	Mix map[string]float64
	// Clients is the client mix of the other nodes (ClientNames).
	Clients map[string]float64
	// CompressedShare is the share of all nodes that offer Codec (the observed node first
	// whenever it is above 0); the others offer plain only.
	CompressedShare float64
	// Codec is the compressed stream codec those nodes offer.
	Codec codec.Spec
	// ForkDigest is the workload's fork digest, for topic strings.
	ForkDigest string
}

// DefaultMeshParams are the defaults for DefaultMeshNodes nodes, chosen so that a model of
// the mesh (estimate_test.go: a model, not a measurement; the run's own figures decide) puts
// the observed node's copies per unique message near the recording's (docs/inputs.md §4):
//
//   - ObservedPeers 45: the recorded node's peer count.
//   - Mix default 0.94, all-subnets 0.02, supernode 0.04 and Degree 14: with 48 nodes, 44
//     default nodes, 1 all-subnets node and 2 supernodes. The observed node then has about
//     2.4 other subscribers on each attestation subnet, 1 on each sync committee subnet
//     and 3.4 on each column it custodies, and a message's origin reaches few of them
//     directly. The model turns that into 1.7 copies per attestation (recording 1.6), 2.0
//     per column (2), 1.5 per sync committee message (1.7) and 8.2 per aggregate (9).
//     More all-subnets nodes raise the attestation copies fast (0.10 gives about 4); a
//     lower degree lowers the aggregate copies (the observed node, a neighbour of nearly
//     every node, then gets more messages first and forwards them): 6.8 at degree 10.
//     Blocks: 5.6 (recording 9), because blocks are above every client's IDONTWANT
//     threshold and on loopback the IDONTWANT arrives before most forwards (7.7 without).
//   - Clients lighthouse 0.60, prysm 0.23, teku 0.12, nimbus 0.03, lodestar 0.02: the
//     Flashbots relay's consensus-client snapshot of 7–13 December 2025 (Lighthouse 39 %,
//     Prysm 15 %, Teku 8 %, Nimbus 2 %, Lodestar under 1 % of proposers; Vouch, Vero/DVT and
//     unseen proposers, 36 %, left out and the rest renormalised; collective.flashbots.net,
//     "A Consensus Layer Client Diversity Snapshot"). It counts the proposers of one relay,
//     not nodes: a stand-in until a node census is at hand. The observed node runs Teku,
//     as the recorded one did.
//   - CompressedShare 0 (a plain run) with Codec snappy-stream, the proposal's.
func DefaultMeshParams() MeshParams {
	sn, err := codec.Parse("snappy-stream")
	if err != nil {
		panic(err) // a constant spec
	}
	return MeshParams{
		Seed:           1,
		Degree:         14,
		ObservedPeers:  45,
		ObservedClient: "teku",
		Mix:            map[string]float64{KindDefault: 0.94, KindAllSubnets: 0.02, KindSupernode: 0.04},
		Clients:        map[string]float64{"lighthouse": 0.60, "prysm": 0.23, "teku": 0.12, "nimbus": 0.03, "lodestar": 0.02},
		Codec:          sn,
		ForkDigest:     workload.DefaultParams().ForkDigest,
	}
}

// shareTolerance is how far from 1 a mix may sum (shares are usually written with two
// decimals).
const shareTolerance = 0.01

// ParseMeshParams reads Testground-style string parameters over DefaultMeshParams; missing
// or empty ones keep their defaults, unknown keys are left to other parsers. Each bad value
// is an error naming the parameter and what it allows.
func ParseMeshParams(m map[string]string) (MeshParams, error) {
	p := DefaultMeshParams()
	get := func(k string) (string, bool) { return ParamValue(m, k) }
	if err := ParsePopulation(m, &p.Seed, &p.ObservedClient, &p.Mix, &p.Clients); err != nil {
		return p, err
	}
	for _, f := range []struct {
		name string
		dst  *int
	}{{ParamDegree, &p.Degree}, {ParamObservedPeers, &p.ObservedPeers}} {
		if v, ok := get(f.name); ok {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return p, fmt.Errorf("param %s: %q is not a positive integer", f.name, v)
			}
			*f.dst = n
		}
	}
	var err error
	if v, ok := get(ParamCompressedShare); ok {
		s, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return p, fmt.Errorf("param %s: %q is not a number in 0..1", ParamCompressedShare, v)
		}
		p.CompressedShare = s
	}
	if v, ok := get(ParamCodec); ok {
		if p.Codec, err = codec.Parse(v); err != nil {
			return p, fmt.Errorf("param %s: %w", ParamCodec, err)
		}
	}
	return p, p.Validate()
}

// ParamValue is m[k] trimmed, and whether it is set: a missing or blank parameter keeps its
// default.
func ParamValue(m map[string]string, k string) (string, bool) {
	v, ok := m[k]
	v = strings.TrimSpace(v)
	return v, ok && v != ""
}

// ParsePopulation reads, over their defaults, the parameters a mesh and a neighbourhood share:
// the topology seed, the observed node's client, and the kind and client shares.
func ParsePopulation(m map[string]string, seed *int64, observedClient *string, mix, clients *map[string]float64) error {
	if v, ok := ParamValue(m, ParamTopologySeed); ok {
		s, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return fmt.Errorf("param %s: %q is not an integer", ParamTopologySeed, v)
		}
		*seed = s
	}
	if v, ok := ParamValue(m, ParamObservedClient); ok {
		*observedClient = v
	}
	var err error
	if v, ok := ParamValue(m, ParamMix); ok {
		if *mix, err = parseShares(ParamMix, v, MixKinds); err != nil {
			return err
		}
	}
	if v, ok := ParamValue(m, ParamClients); ok {
		if *clients, err = parseShares(ParamClients, v, ClientNames); err != nil {
			return err
		}
	}
	return nil
}

// parseShares parses "name:share,name:share"; names must be allowed, each at most once.
func parseShares(param, v string, allowed []string) (map[string]float64, error) {
	out := map[string]float64{}
	for part := range strings.SplitSeq(v, ",") {
		name, share, ok := strings.Cut(strings.TrimSpace(part), ":")
		name = strings.TrimSpace(name)
		f, err := strconv.ParseFloat(strings.TrimSpace(share), 64)
		if !ok || err != nil {
			return nil, fmt.Errorf("param %s: %q is not name:share (e.g. %s:0.5)", param, part, allowed[0])
		}
		if !slices.Contains(allowed, name) {
			return nil, fmt.Errorf("param %s: unknown name %q (allowed: %s)", param, name, strings.Join(allowed, ", "))
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("param %s: %s given twice", param, name)
		}
		out[name] = f
	}
	return out, nil
}

// Validate reports the first parameter that is out of range, by its Testground name. Checks
// that depend on the number of members are Mesh's.
func (p MeshParams) Validate() error {
	if p.Degree < 1 {
		return fmt.Errorf("param %s: %d: want at least 1", ParamDegree, p.Degree)
	}
	if p.ObservedPeers < 1 {
		return fmt.Errorf("param %s: %d: want at least 1", ParamObservedPeers, p.ObservedPeers)
	}
	if p.Observed < 0 {
		return fmt.Errorf("observed member %d: want an index of the members", p.Observed)
	}
	if _, err := ClientProfile(p.ObservedClient); err != nil {
		return fmt.Errorf("param %s: %w", ParamObservedClient, err)
	}
	if err := CheckShares(ParamMix, p.Mix, MixKinds); err != nil {
		return err
	}
	if err := CheckShares(ParamClients, p.Clients, ClientNames); err != nil {
		return err
	}
	if !(p.CompressedShare >= 0 && p.CompressedShare <= 1) {
		return fmt.Errorf("param %s: %v: want 0..1", ParamCompressedShare, p.CompressedShare)
	}
	if p.CompressedShare > 0 && p.Codec.Kind == codec.Plain {
		return fmt.Errorf("param %s: %s is plain but param %s is %v: name a compressed codec (%s)",
			ParamCodec, p.Codec, ParamCompressedShare, p.CompressedShare, codec.Forms)
	}
	if p.ForkDigest == "" {
		return fmt.Errorf("mesh: fork digest not set")
	}
	return nil
}

func CheckShares(param string, shares map[string]float64, allowed []string) error {
	sum := 0.0
	for _, name := range slices.Sorted(maps.Keys(shares)) {
		v := shares[name]
		if !slices.Contains(allowed, name) {
			return fmt.Errorf("param %s: unknown name %q (allowed: %s)", param, name, strings.Join(allowed, ", "))
		}
		if !(v >= 0) || math.IsInf(v, 0) {
			return fmt.Errorf("param %s: %s share %v: want a number ≥ 0", param, name, v)
		}
		sum += v
	}
	if math.Abs(sum-1) > shareTolerance {
		return fmt.Errorf("param %s: shares sum to %.4g: want 1 (±%g)", param, sum, shareTolerance)
	}
	return nil
}

// FormatShares is shares as the share parameters take them (name:share, comma-separated), in
// order: the inverse of their parsing, for defaults and reports.
func FormatShares(shares map[string]float64, order []string) string {
	var parts []string
	for _, k := range order {
		if v, ok := shares[k]; ok {
			parts = append(parts, k+":"+strconv.FormatFloat(v, 'g', -1, 64))
		}
	}
	return strings.Join(parts, ",")
}

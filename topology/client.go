package topology

import (
	"fmt"
	"strings"
	"time"
)

// Client is the GossipSub parameter set of one consensus client, in go-libp2p-pubsub's
// terms (GossipSubParams fields, WithSeenMessagesTTL, WithFloodPublish). Durations are
// mainnet real time; a caller running faster than real time divides them by its time scale.
type Client struct {
	// Name is the profile name ClientProfile takes.
	Name string
	// D, Dlo, Dhi: mesh degree target and watermarks. Dlazy: gossip (IHAVE) target.
	// Dscore: mesh peers kept by score when pruning. Dout: outbound mesh quota.
	D, Dlo, Dhi, Dlazy, Dscore, Dout int
	// Heartbeat is the heartbeat interval.
	Heartbeat time.Duration
	// HistoryLength is the message cache length and HistoryGossip the windows advertised
	// in IHAVE, in heartbeats.
	HistoryLength, HistoryGossip int
	// GossipFactor is the share of non-mesh topic peers that get IHAVE each heartbeat
	// (at least Dlazy).
	GossipFactor float64
	// FanoutTTL is how long fanout peers of a topic the node publishes on without
	// subscribing are kept; SeenTTL how long a message id is remembered.
	FanoutTTL, SeenTTL time.Duration
	// IDontWantThresholdBytes is the smallest message for which the node sends IDONTWANT
	// (gossipsub v1.2).
	IDontWantThresholdBytes int
	// FloodPublish sends the node's own messages to every topic peer, not only the mesh.
	FloodPublish bool
}

// ClientNames lists the profiles ClientProfile knows, in the order of docs/inputs.md §7.
var ClientNames = []string{"spec", "prysm", "lighthouse", "teku", "lodestar", "nimbus"}

// ClientProfile returns a client's GossipSub parameters as its source sets them
// (docs/inputs.md §7; files named below, read late 2026). Where a client sets nothing, the
// value is its library's default as far as go-libp2p-pubsub can express it; values marked
// "unverified" come from docs/inputs.md §7 without a source read here.
//
//	spec        consensus-specs phase0 p2p-interface: D 8/6/12, Dlazy 6, heartbeat 0.7 s,
//	            mcache 6/3, fanout TTL 60 s, seen TTL 2 epochs (768 s). The spec sets no
//	            Dscore, Dout, gossip factor, IDONTWANT threshold or flood publishing: these
//	            are go-libp2p-pubsub v0.19 defaults (4, 2, 0.25, 1024 B, off), as every
//	            streamsim run before the mesh used.
//	prysm       beacon-chain/p2p/pubsub.go: D 8/6/12, heartbeat 700 ms, mcache 6/3, seen TTL
//	            2 epochs; the rest go-libp2p-pubsub defaults (Dlazy 6, IDONTWANT 1024 B,
//	            flood publish off).
//	lighthouse  beacon_node/lighthouse_network/src/config.rs, network load 3 (the default):
//	            D 5/3/10, Dlazy 3, outbound min 2, heartbeat 1 s, history 12/3, fanout 60 s,
//	            flood publish off, duplicate cache 2 epochs, IDONTWANT 1000 B. Dout is 1:
//	            go-libp2p-pubsub needs Dout < D/2 in integers, rust-libp2p allows 2 at D 5.
//	            Dscore 4 is rust-libp2p's retain_scores default. Its cap of 500 messages
//	            per RPC has no go-libp2p-pubsub equivalent.
//	teku        networking/p2p/.../gossip/config/GossipConfig.java: D 8/6/12, Dlazy 6,
//	            heartbeat 700 ms, history 6, advertise 3, fanout 60 s, seen TTL 1115
//	            heartbeats (780.5 s). Flood publishing on (addGossipParamsMiscValues; newer
//	            jvm-libp2p floods only messages below a size threshold, which pubsub cannot
//	            express). IDONTWANT threshold 16 KiB (jvm-libp2p default, unverified).
//	            Dscore and Dout: go-libp2p-pubsub defaults (not read from Teku).
//	lodestar    packages/beacon-node/src/network/gossip/gossipsub.ts: D 8/6/12, Dlazy 6,
//	            heartbeat 700 ms, mcache 6/3, fanout 60 s, seen TTL 550 heartbeats (385 s);
//	            flood publish on (js-libp2p-gossipsub default; Lodestar's opt-out flag from
//	            PR 6755 is off by default); IDONTWANT threshold 16 829 B.
//	nimbus      beacon_chain/networking/eth2_network.nim: D 8/6/12, Dscore 6, Dout 3,
//	            Dlazy 6, heartbeat 700 ms, history 6/3, gossip factor 0.05, fanout 60 s,
//	            seen TTL 2 epochs, flood publish on. IDONTWANT threshold about 200 B
//	            (unverified).
func ClientProfile(name string) (Client, error) {
	const (
		heartbeat   = 700 * time.Millisecond
		fanoutTTL   = 60 * time.Second
		twoEpochs   = 768 * time.Second
		pubsubDscr  = 4
		pubsubDout  = 2
		pubsubGF    = 0.25
		pubsubIDWnt = 1024
	)
	eth := Client{
		Name: name, D: 8, Dlo: 6, Dhi: 12, Dlazy: 6, Dscore: pubsubDscr, Dout: pubsubDout,
		Heartbeat: heartbeat, HistoryLength: 6, HistoryGossip: 3, GossipFactor: pubsubGF,
		FanoutTTL: fanoutTTL, SeenTTL: twoEpochs, IDontWantThresholdBytes: pubsubIDWnt,
	}
	switch name {
	case "spec", "prysm":
		return eth, nil
	case "lighthouse":
		c := eth
		c.D, c.Dlo, c.Dhi, c.Dlazy, c.Dout = 5, 3, 10, 3, 1
		c.Heartbeat = time.Second
		c.HistoryLength = 12
		c.IDontWantThresholdBytes = 1000
		return c, nil
	case "teku":
		c := eth
		c.SeenTTL = 1115 * heartbeat
		c.IDontWantThresholdBytes = 16 << 10
		c.FloodPublish = true
		return c, nil
	case "lodestar":
		c := eth
		c.SeenTTL = 550 * heartbeat
		c.IDontWantThresholdBytes = 16829
		c.FloodPublish = true
		return c, nil
	case "nimbus":
		c := eth
		c.Dscore, c.Dout = 6, 3
		c.GossipFactor = 0.05
		c.IDontWantThresholdBytes = 200
		c.FloodPublish = true
		return c, nil
	}
	return Client{}, fmt.Errorf("unknown client %q (allowed: %s)", name, strings.Join(ClientNames, ", "))
}

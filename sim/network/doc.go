// Package network builds the hosts of a run: one Network value per run, real-clock TCP (with
// links shaped by package link) or a virtual-clock simulated network (package memnet's
// native in-process connections, without noise or yamux, or QUIC over marcopolo/simnet) inside a synctest
// bubble (RunInBubble). Scenarios and nodes get hosts from it and never ask which network it
// is; a new transport is a Network in this package.
//
// Every host has the same base (null resource and connection managers, no relay, metrics or
// ping) whatever carries it; Clock says what time the hosts live in.
package network

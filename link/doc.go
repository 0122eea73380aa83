// Package link models the network links of simulated nodes: per-node uplink and downlink
// bandwidth and per-pair one-way latency, applied in user space to a node's TCP connections
// below the security and muxer layers, so the bytes shaped are wire bytes.
//
// # The model
//
// Each node has one Link (New) and gives its libp2p host Link.Transport(), a TCP transport
// whose raw connections are shaped; noise and yamux run on top, unchanged. A node shapes
// its own traffic only, so the model works alike with every node in one process and with
// one process per node (Testground local:exec), over loopback TCP:
//
//   - Egress. Write copies the bytes into the connection's send buffer and returns; it
//     blocks only while the buffer holds SendBufferBytes (default DefaultSendBufferBytes,
//     4 MiB, Linux's tcp_wmem maximum), which is the writer's backpressure. The node's
//     uplink is a virtual clock shared by its connections: bytes are booked on it from
//     when they were written, in chunks of at most one millisecond of the uplink
//     (1500 B–64 KiB), and leave when it has serialised them behind what was booked
//     before. Connections with more than the uplink can take at once wait in a backlog
//     that the node's uplink scheduler books chunk by chunk, connection by connection in
//     turn, so flows through one uplink share it fairly. Booked bytes are handed to the
//     socket at departure + the pair's one-way latency by one goroutine per connection:
//     many chunks are in flight at once (pipelined; no head-of-line stall), and a busy
//     uplink queues (latency grows) and never drops, as TCP over a bottleneck does. Bytes
//     count against the send buffer until they reach the socket, so one flow's rate is
//     also bounded by SendBufferBytes / one-way latency (19 MB/s at 220 ms), like TCP's
//     window bound.
//   - Ingress. Read takes at most one millisecond of the downlink from the socket and
//     books it on the node's downlink, a virtual clock too: bytes that had to be waited
//     for are booked from their arrival, and pass at once if the downlink is idle (they
//     streamed in no faster than it carries them); bytes found waiting in the socket are
//     booked behind what the downlink was carrying. Read returns when the downlink has
//     carried them. The downlink's queue is the socket buffers, which the link keeps
//     small (64 KiB a side), so a full downlink stalls the sender's socket writes, fills
//     its send buffer and blocks its writer.
//   - Latency is applied once, by the sender, from its region to the receiver's: on
//     connecting, each end writes a preamble naming its region before anything else
//     (both ends must use this transport; 19 bytes plus the name, not shaped and not
//     counted). Both ends know the other's region at once, inbound or outbound, with no
//     lookup table.
//   - Timing is computed, not slept: departures and due times come from the virtual
//     clocks, which advance from when bytes were written or arrived, not from when a
//     goroutine woke, so a late wake-up delays delivery without costing the link
//     capacity, and errors do not accumulate. Waits aim half a millisecond early (Go's
//     timers wake up to a millisecond late in an idle process), and the downlink skips
//     waits shorter than a millisecond; measured one-way latencies come out 0.1–0.6 ms
//     above the model. Stats report how late timed wake-ups were: when the machine is
//     saturated they grow to milliseconds, and latency figures from that run are not to
//     be trusted.
//
// Not modelled: TCP slow start and congestion windows, packet loss, jitter, TCP/IP header
// bytes (rates are TCP payload rates), and queueing inside the network beyond the two
// access links.
//
// # Which runner applies what
//
// The transport runs wherever the node runs; it is the mechanism in the embedded runner
// and under local:exec, where Testground cannot shape (ConfigureNetwork returns nil and
// does nothing) and this kernel has no netem. On local:docker and cluster:k8s it applies
// the same model as well (plus whatever latency the cluster network has; each end uses
// only its own clock). Testground's sidecar can shape there instead
// (Shape.LinkShape converts), but only egress, with one latency per instance: use one of
// the two, never both.
//
// # Defaults
//
// DefaultRegions and DefaultClasses are libp2p gossipsub-interop's Shadow network model;
// Assign draws each node's region and class from them with a seed.
package link

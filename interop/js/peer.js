// A js-libp2p node running Lodestar's GossipSub (@chainsafe/libp2p-gossipsub) with Ethereum
// consensus settings: streamsim's interop tests use it as a GossipSub implementation that
// streamsim did not write. TCP, noise, yamux; GossipSub over plain /meshsub/1.2.0 and
// /meshsub/1.1.0, and over snappy-stream (snappystream.js) when given --codec.
//
// Usage:
//   node peer.js [--listen MA] [--dial MA]... [--direct MA]... [--topic T]...
//                [--codec SPEC]... [--key B64] [--time-scale X] [--max-rpc-bytes N] [--out FILE]
//
// MA is a multiaddr; --dial and --direct need its /p2p/<peer id> part. --direct peers get every
// message of a topic they subscribe to and no gossip (GossipSub direct peers), and are dialled.
// SPEC is a snappy-stream codec spec as streamsim's Go nodes take it (snappy-stream,
// snappy-stream:4KiB, ...); its protocol ID (/snappy-stream/meshsub/1.2.0 for the proposal's
// 64 KiB history) is offered before the plain ones, in the order given, as the Go nodes do.
// --key is the node's private key (libp2p's protobuf encoding, base64), so that a test can
// know the peer id before the node starts; without it the node makes a new one.
//
// stdout carries JSON lines only, each with an "event":
//   {"event":"ready","peer_id","addrs":[MA],"protocols":[...]}                  once, on start
//   {"event":"received","id","topic","size","from"}                             on exit, one per message
//   {"event":"stopped","received":N}                                            last line
// (with --out FILE the "received" lines go to FILE instead and stdout has only "stopped").
// Commands are JSON lines on stdin; each reply echoes the command's "seq":
//   {"cmd":"publish","topic","data":BASE64} -> {"event":"published","id","recipients"}
//   {"cmd":"subscribe","topic"}             -> {"event":"subscribed"}
//   {"cmd":"dial","addr"}                   -> {"event":"dialled"}
//   {"cmd":"subscribers","topic"}           -> {"event":"subscribers","peers":[id]}
//   {"cmd":"mesh","topic"}                  -> {"event":"mesh","peers":[id]}
//   {"cmd":"count"}                         -> {"event":"count","received":N}
//   {"cmd":"streams"}                       -> {"event":"streams","stream_errors":N,"streams":[{peer,protocol,direction,codec,blocks,raw_bytes,wire_bytes}]}
//                                              (codec and counters on snappy-stream streams; stream_errors
//                                              counts streams reset after a codec error)
//   {"cmd":"stop"}                          -> the exit lines above
// A failed command replies {"event":"error","error"}. SIGTERM, SIGINT and end of stdin stop
// the node as "stop" does, so the node never outlives the process that drives it.
// Diagnostics go to stderr.

// libp2p 2.x's peer store (through it-queue) calls Promise.withResolvers, which Node.js has
// from version 22; core-js adds it on Node.js 20. Imported first so it is in place before
// anything else runs.
import 'core-js/actual/promise/with-resolvers.js'

import { createHash } from 'node:crypto'
import { createRequire } from 'node:module'
import { createWriteStream } from 'node:fs'
import { createInterface } from 'node:readline'
import { parseArgs } from 'node:util'

import { gossipsub } from '@chainsafe/libp2p-gossipsub'
import { noise } from '@chainsafe/libp2p-noise'
import { yamux } from '@chainsafe/libp2p-yamux'
import { privateKeyFromProtobuf } from '@libp2p/crypto/keys'
import { identify } from '@libp2p/identify'
import { peerIdFromString } from '@libp2p/peer-id'
import { tcp } from '@libp2p/tcp'
import { multiaddr } from '@multiformats/multiaddr'
import { createLibp2p } from 'libp2p'

import { Encoder, StreamDecoder, SnappyStreamError, PLAIN_PROTOCOL, parseSpec } from './snappystream.js'

// snappy-wasm (the Rust snap crate's raw format in WebAssembly, the decoder Lodestar
// benchmarks for gossip) ships its Node.js build as CommonJS; its ES build fetches the wasm,
// which Node cannot do from a file URL.
const require = createRequire(import.meta.url)
const snappy = require('snappy-wasm')

// Consensus-spec gossip constants (docs/inputs.md §5).
const MAX_PAYLOAD_BYTES = 10 * 1024 * 1024
const DOMAIN_VALID_SNAPPY = Buffer.from([1, 0, 0, 0])
const DOMAIN_INVALID_SNAPPY = Buffer.from([0, 0, 0, 0])
const MESSAGE_ID_BYTES = 20
// Plain GossipSub protocols offered after the compressed ones: 1.2 and 1.1 (no
// /meshsub/1.0.0, no floodsub).
const PLAIN_PROTOCOLS = [PLAIN_PROTOCOL, '/meshsub/1.1.0']
// Bytes of the uvarint length prefix of an RPC frame, at most (Go's binary.MaxVarintLen64).
const MAX_PREFIX_BYTES = 10

function usage (msg) {
  process.stderr.write(`peer.js: ${msg}\n`)
  process.exit(2)
}

const flagOptions = {
  listen: { type: 'string', default: '/ip4/127.0.0.1/tcp/0' },
  dial: { type: 'string', multiple: true, default: [] },
  direct: { type: 'string', multiple: true, default: [] },
  topic: { type: 'string', multiple: true, default: [] },
  codec: { type: 'string', multiple: true, default: [] },
  key: { type: 'string' },
  'time-scale': { type: 'string', default: '1' },
  // Largest RPC accepted: the Snappy worst case of a maximal payload plus room for the topic
  // and protobuf framing, as streamsim's Go nodes allow.
  'max-rpc-bytes': { type: 'string', default: String(snappyMaxEncodedLen(MAX_PAYLOAD_BYTES) + 64 * 1024) },
  out: { type: 'string' }
}
let flags
try {
  flags = parseArgs({ options: flagOptions, strict: true }).values
} catch (err) {
  usage(`${err.message} (flags: ${Object.keys(flagOptions).map((f) => '--' + f).join(', ')})`)
}

const timeScale = Number(flags['time-scale'])
if (!(timeScale > 0)) usage(`--time-scale ${flags['time-scale']}: want a number > 0`)
const maxRPCBytes = Number(flags['max-rpc-bytes'])
if (!Number.isInteger(maxRPCBytes) || maxRPCBytes <= 0) usage(`--max-rpc-bytes ${flags['max-rpc-bytes']}: want an integer > 0`)
const scaled = (ms) => Math.max(1, Math.round(ms / timeScale))

function addrInfo (flag, s) {
  let ma
  try {
    ma = multiaddr(s)
  } catch (err) {
    usage(`${flag} ${s}: not a multiaddr (${err.message})`)
  }
  const id = ma.getPeerId()
  if (id == null) usage(`${flag} ${s}: want a multiaddr ending in /p2p/<peer id>`)
  return { id: peerIdFromString(id), addrs: [ma.decapsulateCode(421)], ma }
}
const direct = flags.direct.map((s) => addrInfo('--direct', s))
const codecs = flags.codec.map((spec) => {
  try {
    return parseSpec(spec)
  } catch (err) {
    usage(`--codec: ${err.message}`)
  }
})
const codecByProtocol = new Map(codecs.map((c) => [c.protocol, c]))
const PROTOCOLS = [...codecByProtocol.keys(), ...PLAIN_PROTOCOLS]
const dial = flags.dial.map((s) => addrInfo('--dial', s))
let privateKey
if (flags.key != null) {
  try {
    privateKey = privateKeyFromProtobuf(Buffer.from(flags.key, 'base64'))
  } catch (err) {
    usage(`--key: not a base64 libp2p private key (${err.message})`)
  }
}

// snappyMaxEncodedLen is the block format's worst case (snappy's MaxCompressedLength).
function snappyMaxEncodedLen (n) {
  return 32 + n + Math.floor(n / 6)
}

// declaredLength reads the uvarint that starts a Snappy block (the decoded length), or -1
// when it is malformed or above 2^32-1; Go's snappy.DecodedLen rejects the same inputs.
function declaredLength (data) {
  let n = 0
  for (let i = 0, shift = 0; i < data.length && i < 5; i++, shift += 7) {
    const b = data[i]
    n += (b & 0x7f) * 2 ** shift
    if (b < 0x80) return n <= 0xffffffff ? n : -1
  }
  return -1
}

// messageId is the consensus-spec message id (Altair onwards):
// SHA256(0x01000000 ‖ uint64_le(len(topic)) ‖ topic ‖ snappy_decompress(data))[:20], or with
// domain 0x00000000 over the raw data when data is not a valid Snappy block of at most
// MAX_PAYLOAD_BYTES. The length bound is checked before decoding so hostile input cannot make
// the decoder allocate more.
function messageId (msg) {
  const topic = Buffer.from(msg.topic, 'utf8')
  let domain = DOMAIN_INVALID_SNAPPY
  let payload = msg.data
  const n = declaredLength(msg.data)
  if (n >= 0 && n <= MAX_PAYLOAD_BYTES) {
    try {
      payload = snappy.decompress_raw(msg.data)
      domain = DOMAIN_VALID_SNAPPY
    } catch {
      payload = msg.data
    }
  }
  const topicLen = Buffer.alloc(8)
  topicLen.writeBigUInt64LE(BigInt(topic.length))
  return createHash('sha256').update(domain).update(topicLen).update(topic).update(payload)
    .digest().subarray(0, MESSAGE_ID_BYTES)
}

const hex = (id) => Buffer.from(id).toString('hex')

// GossipSub settings as Lodestar passes them (beacon-node network/gossip/gossipsub.ts): D
// 8/6/12, Dlazy 6, heartbeat 0.7 s, fanout TTL 60 s, mcache 6/3, IWANT follow-up 12 s, batch
// publish, IDONTWANT from 16 829 B. Two differ, to match streamsim's Go nodes: the seen TTL is
// the spec's 768 s (2 epochs) and flood publishing is off (Lodestar floods its
// own messages unless told not to), so in a mesh this peer publishes as the Go nodes do.
// Durations are divided by the time scale, as on the Go side. No dataTransform: message data
// stays ssz_snappy as on the wire, and the message id decompresses it.
const pubsubOptions = {
  globalSignaturePolicy: 'StrictNoSign',
  D: 8,
  Dlo: 6,
  Dhi: 12,
  Dlazy: 6,
  heartbeatInterval: scaled(700),
  fanoutTTL: scaled(60_000),
  mcacheLength: 6,
  mcacheGossip: 3,
  seenTTL: scaled(768_000),
  gossipsubIWantFollowupMs: scaled(12_000),
  floodPublish: false,
  batchPublish: true,
  fallbackToFloodsub: false,
  idontwantMinDataSize: 16829,
  msgIdFn: messageId,
  msgIdToStrFn: hex,
  maxInboundDataLength: maxRPCBytes,
  directPeers: direct.map(({ id, addrs }) => ({ id, addrs }))
}

// Stream compression. gossipsub reads its inbound streams and writes its outbound ones
// (one direction each), so one stream has one codec state: a StreamDecoder or an Encoder,
// with the history of that direction. Each chunk gossipsub writes is one RPC frame (length
// prefix and protobuf) and becomes one block, as each Write does on the Go side.
const meters = new WeakMap() // libp2p stream → { codec, blocks, raw_bytes, wire_bytes }
let streamErrors = 0

// compressed returns the stream gossipsub should use in place of raw: raw itself on a plain
// protocol, else a view of raw that codes its bytes and names its protocol /meshsub/1.2.0
// to gossipsub, whose v1.2 features (IDONTWANT) and mesh rules go by that name; the Go
// nodes map their compressed IDs to v1.2 features the same way. The connection still
// reports the negotiated ID.
function compressed (raw, peerId) {
  const c = codecByProtocol.get(raw.protocol)
  if (c == null) return raw
  const meter = { codec: c.spec, blocks: 0, raw_bytes: 0, wire_bytes: 0 }
  meters.set(raw, meter)
  let source
  const sink = async (frames) => {
    const enc = new Encoder(c.windowBytes)
    await raw.sink((async function * () {
      for await (const chunk of frames) {
        const frame = chunk instanceof Uint8Array ? chunk : chunk.subarray()
        if (frame.length === 0) continue // an empty write is no block, as on the Go side
        const block = enc.encode(frame)
        meter.blocks++
        meter.raw_bytes += frame.length
        meter.wire_bytes += block.length
        yield block
      }
    })())
  }
  const decoded = async function * () {
    const dec = new StreamDecoder(c.windowBytes, maxRPCBytes + MAX_PREFIX_BYTES)
    try {
      for await (const chunk of raw.source) {
        for (const frame of dec.push(chunk instanceof Uint8Array ? chunk : chunk.subarray())) {
          meter.blocks++
          meter.raw_bytes += frame.length
          meter.wire_bytes = dec.wireBytes
          yield frame
        }
      }
      dec.finish()
    } catch (err) {
      if (!(err instanceof SnappyStreamError)) throw err // the transport's own errors
      // A codec error puts this stream out of step with its sender: reset it (gossipsub
      // then drops the peer's inbound stream); other streams are untouched.
      streamErrors++
      process.stderr.write(`peer.js: ${c.spec} stream from ${peerId}: ${err.message}; resetting it\n`)
      raw.abort(err)
      throw err
    }
  }
  return new Proxy(raw, {
    get (target, prop) {
      if (prop === 'protocol') return PLAIN_PROTOCOL
      if (prop === 'sink') return sink
      if (prop === 'source') return (source ??= decoded())
      const v = Reflect.get(target, prop)
      return typeof v === 'function' ? v.bind(target) : v
    }
  })
}

// The service factory with the protocol list set before start() registers the handlers, and
// gossipsub's two stream entry points wrapped so that compressed protocols are coded.
function ethereumGossipsub (opts) {
  const factory = gossipsub(opts)
  return (components) => {
    const ps = factory(components)
    ps.multicodecs = [...PROTOCOLS]
    const createInbound = ps.createInboundStream.bind(ps)
    ps.createInboundStream = (peerId, stream) => createInbound(peerId, compressed(stream, peerId))
    const createOutbound = ps.createOutboundStream.bind(ps)
    ps.createOutboundStream = (peerId, connection) => createOutbound(peerId, new Proxy(connection, {
      get (target, prop) {
        if (prop === 'newStream') return async (...args) => compressed(await target.newStream(...args), peerId)
        const v = Reflect.get(target, prop)
        return typeof v === 'function' ? v.bind(target) : v
      }
    }))
    return ps
  }
}

const node = await createLibp2p({
  privateKey,
  addresses: { listen: [flags.listen] },
  transports: [tcp()],
  connectionEncrypters: [noise()],
  streamMuxers: [yamux()],
  services: {
    identify: identify(),
    pubsub: ethereumGossipsub(pubsubOptions)
  }
})
const pubsub = node.services.pubsub

const received = []
pubsub.addEventListener('gossipsub:message', (evt) => {
  const { msgId, msg, propagationSource } = evt.detail
  received.push({ id: msgId, topic: msg.topic, size: msg.data.length, from: propagationSource.toString() })
})

for (const t of flags.topic) pubsub.subscribe(t)
for (const { ma } of dial) {
  try {
    await node.dial(ma)
  } catch (err) {
    process.stderr.write(`peer.js: dial ${ma}: ${err.message}\n`)
    process.exit(1)
  }
}

function emit (obj) {
  process.stdout.write(JSON.stringify(obj) + '\n')
}

emit({
  event: 'ready',
  peer_id: node.peerId.toString(),
  addrs: node.getMultiaddrs().map((ma) => ma.toString()),
  protocols: pubsub.multicodecs
})

const commands = {
  async publish ({ topic, data }) {
    if (typeof topic !== 'string' || typeof data !== 'string') throw new Error('publish: want "topic" and base64 "data"')
    const bytes = Buffer.from(data, 'base64')
    const { recipients } = await pubsub.publish(topic, bytes)
    return { event: 'published', id: hex(messageId({ topic, data: bytes })), recipients: recipients.length }
  },
  async subscribe ({ topic }) {
    if (typeof topic !== 'string') throw new Error('subscribe: want "topic"')
    pubsub.subscribe(topic)
    return { event: 'subscribed' }
  },
  async dial ({ addr }) {
    await node.dial(multiaddr(addr))
    return { event: 'dialled' }
  },
  async subscribers ({ topic }) {
    return { event: 'subscribers', peers: pubsub.getSubscribers(topic).map((p) => p.toString()) }
  },
  async mesh ({ topic }) {
    return { event: 'mesh', peers: pubsub.getMeshPeers(topic) }
  },
  async count () {
    return { event: 'count', received: received.length }
  },
  async streams () {
    const out = []
    for (const conn of node.getConnections()) {
      for (const s of conn.streams) {
        if (s.protocol != null) out.push({ peer: conn.remotePeer.toString(), protocol: s.protocol, direction: s.direction, ...meters.get(s) })
      }
    }
    return { event: 'streams', stream_errors: streamErrors, streams: out }
  }
}

let stopping = false
async function stop () {
  if (stopping) return
  stopping = true
  try {
    await node.stop()
  } catch (err) {
    process.stderr.write(`peer.js: stop: ${err.message}\n`)
  }
  const lines = received.map((r) => JSON.stringify({ event: 'received', ...r }) + '\n')
  if (flags.out != null) {
    const f = createWriteStream(flags.out)
    for (const l of lines) f.write(l)
    await new Promise((resolve, reject) => f.end((err) => (err ? reject(err) : resolve())))
  } else {
    for (const l of lines) process.stdout.write(l)
  }
  // Exit once stdout has flushed (pipes to the parent may be asynchronous).
  process.stdout.write(JSON.stringify({ event: 'stopped', received: received.length }) + '\n', () => process.exit(0))
}

process.on('SIGTERM', stop)
process.on('SIGINT', stop)

const rl = createInterface({ input: process.stdin, crlfDelay: Infinity })
// Commands run one at a time, in order, so replies come back in the order they were sent.
let queue = Promise.resolve()
rl.on('line', (line) => {
  queue = queue.then(async () => {
    if (line.trim() === '' || stopping) return
    let cmd
    try {
      cmd = JSON.parse(line)
    } catch (err) {
      emit({ event: 'error', error: `bad command line: ${err.message}` })
      return
    }
    if (cmd.cmd === 'stop') return stop()
    const fn = commands[cmd.cmd]
    if (fn == null) {
      emit({ event: 'error', seq: cmd.seq, error: `unknown cmd ${JSON.stringify(cmd.cmd)} (allowed: ${[...Object.keys(commands), 'stop'].join(', ')})` })
      return
    }
    try {
      emit({ ...(await fn(cmd)), seq: cmd.seq })
    } catch (err) {
      emit({ event: 'error', seq: cmd.seq, error: `${cmd.cmd}: ${err.message}` })
    }
  })
})
rl.on('close', () => { queue = queue.then(stop) })

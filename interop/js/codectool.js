// The JS snappy-stream codec (snappystream.js) as a process that streamsim's Go tests drive,
// to check it against the Go codec byte for byte and to time it on the same frames.
//
// Usage: node codectool.js. Requests are JSON lines on stdin, one reply line each on stdout;
// bytes travel in base64.
//   {"op":"spec","spec":S}                        -> {"spec","protocol","window"}
//   {"op":"encode","window":W,"frames":[B64]}     -> {"blocks":[B64]}   one stream direction
//   {"op":"decode","window":W,"max_block_bytes":N,"stream":B64,"chunk":K}
//        -> {"output":B64,"blocks":N,"error":E,"code":C}
//      the stream is fed to a StreamDecoder in chunks of K bytes (0: one chunk), then ended;
//      output is everything decoded before the first error
//   {"op":"decode_blocks","window":W,"max_block_bytes":N,"blocks":[B64]}
//        -> {"outputs":[B64],"error_at":I,"error":E,"code":C}
//      each block given to Decoder.decode in turn (error_at -1 when all decoded)
//   {"op":"bench","window":W,"frames":[B64],"min_ms":T}
//        -> {"raw_bytes","wire_bytes","encode_ns","decode_ns","encode_cpu_ns","decode_cpu_ns",
//            "encode_passes","decode_passes"}
//      each pass codes the frames as one stream with a fresh encoder or decoder; after one
//      untimed pass, passes repeat until min_ms of wall time have passed; times are nanoseconds per pass, of wall clock
//      and of the process's CPU (user + system, all threads: V8's compiler and collector too)
// A request that cannot be carried out replies {"fail":E}.

import { createInterface } from 'node:readline'

import { Decoder, Encoder, StreamDecoder, parseSpec, DEFAULT_MAX_BLOCK_BYTES } from './snappystream.js'

const b64 = (u8) => Buffer.from(u8.buffer, u8.byteOffset, u8.length).toString('base64')
const bytes = (s) => new Uint8Array(Buffer.from(s, 'base64'))

function concat (parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0))
  let o = 0
  for (const p of parts) {
    out.set(p, o)
    o += p.length
  }
  return out
}

const ops = {
  spec ({ spec }) {
    const s = parseSpec(spec)
    return { spec: s.spec, protocol: s.protocol, window: s.windowBytes }
  },
  encode ({ window, frames }) {
    const enc = new Encoder(window)
    return { blocks: frames.map((f) => b64(enc.encode(bytes(f)))) }
  },
  decode ({ window, max_block_bytes: max, stream, chunk }) {
    const sd = new StreamDecoder(window, max || DEFAULT_MAX_BLOCK_BYTES)
    const input = bytes(stream)
    const step = chunk > 0 ? chunk : Math.max(input.length, 1)
    const out = []
    try {
      for (let i = 0; i < input.length; i += step) {
        for (const b of sd.push(input.subarray(i, i + step))) out.push(b)
      }
      sd.finish()
      return { output: b64(concat(out)), blocks: sd.blocks, error: '', code: '' }
    } catch (err) {
      if (err.code == null) throw err
      return { output: b64(concat(out)), blocks: sd.blocks, error: err.message, code: err.code }
    }
  },
  decode_blocks ({ window, max_block_bytes: max, blocks }) {
    const dec = new Decoder(window, max || DEFAULT_MAX_BLOCK_BYTES)
    const outputs = []
    for (let i = 0; i < blocks.length; i++) {
      try {
        outputs.push(b64(dec.decode(bytes(blocks[i]))))
      } catch (err) {
        if (err.code == null) throw err
        return { outputs, error_at: i, error: err.message, code: err.code }
      }
    }
    return { outputs, error_at: -1, error: '', code: '' }
  },
  bench ({ window, frames, min_ms: minMs }) {
    const input = frames.map(bytes)
    const raw = input.reduce((n, f) => n + f.length, 0)
    let blocks
    const time = (pass) => {
      pass() // untimed: V8 compiles the hot loops during the first pass
      let passes = 0
      const t0 = process.hrtime.bigint()
      const c0 = process.cpuUsage()
      let t
      do {
        pass()
        passes++
        t = process.hrtime.bigint() - t0
      } while (Number(t) / 1e6 < minMs)
      const c = process.cpuUsage(c0)
      return { ns: Number(t) / passes, cpuNs: (c.user + c.system) * 1e3 / passes, passes }
    }
    const e = time(() => {
      const enc = new Encoder(window)
      blocks = input.map((f) => enc.encode(f))
    })
    const wire = blocks.reduce((n, b) => n + b.length, 0)
    const d = time(() => {
      const dec = new Decoder(window)
      for (const b of blocks) dec.decode(b)
    })
    return {
      raw_bytes: raw, wire_bytes: wire, encode_ns: e.ns, decode_ns: d.ns, encode_cpu_ns: e.cpuNs, decode_cpu_ns: d.cpuNs,
      encode_passes: e.passes, decode_passes: d.passes
    }
  }
}

const rl = createInterface({ input: process.stdin, crlfDelay: Infinity })
rl.on('line', (line) => {
  if (line.trim() === '') return
  let reply
  try {
    const req = JSON.parse(line)
    const op = ops[req.op]
    if (op == null) throw new Error(`unknown op ${JSON.stringify(req.op)} (allowed: ${Object.keys(ops).join(', ')})`)
    reply = op(req)
  } catch (err) {
    reply = { fail: err.message }
  }
  process.stdout.write(JSON.stringify(reply) + '\n')
})

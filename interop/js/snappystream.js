// snappy-stream in JavaScript: a stream of unmodified Snappy blocks, one per gossipsub RPC,
// whose copies may also reach into a history of the earlier blocks of the stream direction.
// Written from the format's description (streamsim's docs/format.md, "The snappy-stream wire
// format"), as a second implementation beside streamsim's Go package codec/snappystream.
//
// The format, as this file implements it:
// - One direction of a stream is a concatenation of Snappy blocks and nothing else. A block is
//   uvarint(decoded length) and then elements: a literal (tag 0b00, its length - 1 in the tag's
//   upper 6 bits, or 60..63 there for 1..4 little-endian length bytes after the tag), or a copy
//   with a 1-byte offset (tag 0b01: length 4..11 in bits 2..4, offset bits 8..10 in bits 5..7,
//   then the offset's low byte), a 2-byte offset (0b10: length 1..64, then the offset in 2 bytes
//   LE) or a 4-byte offset (0b11: length 1..64, offset in 4 bytes LE). A block ends when its
//   declared length has been produced.
// - Both ends keep the last W bytes (the window) of everything decoded earlier on the stream
//   direction. While a block has produced p bytes, a copy offset o is valid when
//   1 ≤ o ≤ p + h, h = min(W, bytes decoded before the block). Copies may overlap their own
//   output (offset < length): the result repeats the last `offset` bytes.
// - W = 0 makes every block a plain Snappy block.
// - A decoder rejects, with an error after which the stream is unusable (the peer resets it):
//   a declared length above its bound, before allocating anything; a copy offset beyond p + h;
//   an element that runs past the declared length; a truncated block. Its memory is W plus one
//   block.
// - W is fixed by the protocol ID (streamsim's codec spec string: "snappy-stream" is the
//   proposal's /snappy-stream/meshsub/1.2.0 with W = 64 KiB; every other spec is
//   /streamsim/<canonical spec>/meshsub/1.2.0).
//
// The encoder is this file's own greedy LZ77 (one hash table of 4-byte sequences over history
// and block, forward and backward match extension, a skip that grows over incompressible
// bytes); it is not a port of the Go encoder, so its output differs from Go's while any
// conforming decoder reads both.

import { encodeUint8Array as putUvarint, encodingLength as uvarintLength } from 'uint8-varint'

export const DEFAULT_WINDOW_BYTES = 64 << 10
export const MAX_WINDOW_BYTES = 16 << 20
// One gossip RPC frame carrying a maximal 10 MiB payload plus its framing: the Go reader's
// default bound, so the two implementations reject the same blocks.
export const DEFAULT_MAX_BLOCK_BYTES = 10 * 1024 * 1024 + 64 * 1024
export const PLAIN_PROTOCOL = '/meshsub/1.2.0'
export const PROPOSAL_PROTOCOL = '/snappy-stream/meshsub/1.2.0'

// Error codes, one per rule of the format a block can break.
export const ERR_BLOCK_TOO_LARGE = 'ERR_BLOCK_TOO_LARGE'
export const ERR_CORRUPT = 'ERR_CORRUPT'
export const ERR_TRUNCATED = 'ERR_TRUNCATED'

export class SnappyStreamError extends Error {
  constructor (code, message) {
    super(message)
    this.name = 'SnappyStreamError'
    this.code = code
  }
}

const TAG_LITERAL = 0
const TAG_COPY1 = 1
const TAG_COPY2 = 2
const TAG_COPY4 = 3
const MAX_HEADER_BYTES = 5 // a uint32 in 7-bit groups

// maxEncodedLen bounds the block encode() returns for n input bytes: literals cost at most 5
// tag bytes per run and every copy is no longer than the bytes it replaces.
export function maxEncodedLen (n) {
  return 32 + n + Math.ceil(n / 6)
}

// parseSize reads "4096", "4KiB", "1MiB", "1GiB" as codec/spec.go's ParseSize does.
function parseSize (v) {
  const m = /^([0-9]+)(KiB|MiB|GiB)?$/.exec(v)
  const mult = m == null ? 0 : { KiB: 1 << 10, MiB: 1 << 20, GiB: 1 << 30 }[m[2]] ?? 1
  const n = m == null ? NaN : Number(m[1]) * mult
  if (!(Number.isSafeInteger(n) && Number(m[1]) <= 2 ** 31 - 1 && n <= 2 ** 31 - 1)) {
    throw new Error(`size ${JSON.stringify(v)} is not a byte count like 4096, 4KiB, 64KiB or 1MiB`)
  }
  return n
}

function formatSize (n) {
  for (const [unit, size] of [['GiB', 1 << 30], ['MiB', 1 << 20], ['KiB', 1 << 10]]) {
    if (n > 0 && n % size === 0) return `${n / size}${unit}`
  }
  return String(n)
}

// parseSpec parses the snappy-stream forms of a streamsim codec spec:
// snappy-stream[:<window>[:fast]]. It returns the window, the canonical spec string and the
// protocol ID. The `better` level is not implemented here (this encoder has one level), and
// plain is not a codec of a wrapped stream.
export function parseSpec (spec) {
  const allowed = 'snappy-stream[:<window>[:fast]] with a window of 0..16MiB (default 64KiB)'
  const parts = String(spec).split(':')
  if (parts[0] !== 'snappy-stream' || parts.length > 3) {
    throw new Error(`codec spec ${JSON.stringify(spec)}: want ${allowed}`)
  }
  let windowBytes = DEFAULT_WINDOW_BYTES
  if (parts.length > 1) {
    try {
      windowBytes = parseSize(parts[1])
    } catch (err) {
      throw new Error(`codec spec ${JSON.stringify(spec)}: window: ${err.message} (allowed: ${allowed})`)
    }
    if (windowBytes > MAX_WINDOW_BYTES) {
      throw new Error(`codec spec ${JSON.stringify(spec)}: window ${formatSize(windowBytes)} above 16MiB (allowed: ${allowed})`)
    }
  }
  if (parts.length > 2 && parts[2] !== 'fast') {
    throw new Error(`codec spec ${JSON.stringify(spec)}: level ${JSON.stringify(parts[2])}: this implementation has only the fast encoder (allowed: ${allowed})`)
  }
  const canonical = windowBytes === DEFAULT_WINDOW_BYTES ? 'snappy-stream' : `snappy-stream:${formatSize(windowBytes)}`
  const protocol = canonical === 'snappy-stream' ? PROPOSAL_PROTOCOL : `/streamsim/${canonical}/meshsub/1.2.0`
  return { windowBytes, spec: canonical, protocol }
}

function checkWindow (windowBytes) {
  if (!Number.isInteger(windowBytes) || windowBytes < 0 || windowBytes > MAX_WINDOW_BYTES) {
    throw new RangeError(`window of ${windowBytes} bytes: want an integer in 0..${MAX_WINDOW_BYTES}`)
  }
}

// History is the last bytes of a stream direction followed by the block being coded, in one
// buffer, so that a copy into earlier blocks is an index into the same array. Bytes older
// than the window are dropped only when a block does not fit, once per `slack` bytes.
class History {
  constructor (windowBytes) {
    this.windowBytes = windowBytes
    this.slack = Math.min(Math.max(windowBytes, 16 << 10), 4 << 20)
    this.buf = new Uint8Array(0)
    this.len = 0 // bytes of buf in use
  }

  // reserve makes room for n more bytes and returns where they start; it returns how many
  // bytes it dropped from the front in this.dropped.
  reserve (n) {
    this.dropped = 0
    if (this.buf.length - this.len >= n) return this.len
    const keep = Math.min(this.len, this.windowBytes)
    const drop = this.len - keep
    if (keep + n + this.slack > this.buf.length) {
      const nb = new Uint8Array(keep + n + this.slack)
      nb.set(this.buf.subarray(drop, this.len))
      this.buf = nb
    } else {
      this.buf.copyWithin(0, drop, this.len)
    }
    this.len = keep
    this.dropped = drop
    return keep
  }

  // lowest returns the first index a copy in a block starting at bs may reach.
  lowest (bs) {
    return bs - Math.min(this.windowBytes, bs)
  }
}

const HASH_BITS = 14
const HASH_MUL = 0x1e35a7bd

// Encoder encodes the blocks of one stream direction, in order.
export class Encoder {
  constructor (windowBytes = DEFAULT_WINDOW_BYTES) {
    checkWindow(windowBytes)
    this.hist = new History(windowBytes)
    // Stream coordinate (buffer index + this.base) of the last position with each hash; -1
    // for none. Coordinates spare the table a rewrite each time the history slides.
    this.table = new Int32Array(1 << HASH_BITS).fill(-1)
    this.base = 0
    this.scratch = new Uint8Array(0)
    this.blocks = 0
  }

  // encode returns one block holding src (a Uint8Array) and advances the history.
  encode (src) {
    const n = src.length
    const hist = this.hist
    const bs = hist.reserve(n)
    this.base += hist.dropped
    if (this.base + bs + n > 2 ** 31 - 1) this.rebase()
    const base = this.base
    const buf = hist.buf
    buf.set(src, bs)
    const end = bs + n
    hist.len = end
    this.blocks++

    // Elements go to a scratch buffer kept across blocks; the block returned is a copy of its
    // used part (small ones from Node's Buffer pool): allocating a worst-case array per block
    // costs more than the copy.
    if (this.scratch.length < maxEncodedLen(n)) this.scratch = new Uint8Array(maxEncodedLen(n))
    const out = this.scratch
    putUvarint(n, out, 0)
    let d = uvarintLength(n)
    const lo = hist.lowest(bs)
    const table = this.table
    let lit = bs // start of the pending literal
    let i = bs
    let skip = 32
    while (i + 4 <= end) {
      const v = load32(buf, i)
      const h = Math.imul(v, HASH_MUL) >>> (32 - HASH_BITS)
      let c = table[h] - base
      table[h] = i + base
      if (c < lo || load32(buf, c) !== v) {
        // Over incompressible bytes look at fewer positions: the step grows by one for every
        // 32 bytes without a match (Snappy's heuristic).
        const step = skip >> 5
        i += step
        skip += step
        continue
      }
      let m = i + 4
      while (m < end && buf[m] === buf[m - i + c]) m++
      while (i > lit && c > lo && buf[i - 1] === buf[c - 1]) {
        i--
        c--
      }
      const length = m - i
      const offset = i - c
      if (offset > 0xffff && length < 8) {
        // A 4-byte-offset copy costs 5 bytes: not worth it for a short match.
        i = m
        continue
      }
      if (i > lit) d = emitLiteral(out, d, buf, lit, i)
      d = emitCopy(out, d, offset, length)
      // Index the match's last position so a repeat right after it is found.
      if (m - 1 > i && m + 3 <= end) table[Math.imul(load32(buf, m - 1), HASH_MUL) >>> (32 - HASH_BITS)] = m - 1 + base
      i = m
      lit = m
      skip = 32
    }
    if (end > lit) d = emitLiteral(out, d, buf, lit, end)
    const block = Buffer.allocUnsafe(d)
    block.set(out.subarray(0, d))
    return block
  }

  // rebase restarts stream coordinates at 0 before they outgrow the table's 31 bits (after
  // 2 GiB of stream); entries older than the history are forgotten.
  rebase () {
    const t = this.table
    const base = this.base
    for (let k = 0; k < t.length; k++) t[k] = t[k] >= base ? t[k] - base : -1
    this.base = 0
  }

  reset () {
    this.hist = new History(this.hist.windowBytes)
    this.table.fill(-1)
    this.base = 0
    this.blocks = 0
  }
}

function load32 (b, i) {
  return (b[i] | (b[i + 1] << 8) | (b[i + 2] << 16) | (b[i + 3] << 24)) >>> 0
}

function emitLiteral (out, d, buf, from, to) {
  const n = to - from - 1
  if (n < 60) {
    out[d++] = n << 2 | TAG_LITERAL
  } else {
    const bytes = n < 0x100 ? 1 : n < 0x10000 ? 2 : n < 0x1000000 ? 3 : 4
    out[d++] = (59 + bytes) << 2 | TAG_LITERAL
    for (let k = 0, x = n; k < bytes; k++, x >>>= 8) out[d++] = x & 0xff
  }
  if (to - from <= 32) {
    for (let k = from; k < to; k++) out[d++] = buf[k]
    return d
  }
  out.set(buf.subarray(from, to), d)
  return d + to - from
}

// emitCopy writes a match as copies of at most 64 bytes; a remainder is never shorter than 4
// bytes, so it can use the 2-byte 1-byte-offset form when the offset allows.
function emitCopy (out, d, offset, length) {
  while (length > 0) {
    const piece = length >= 68 ? 64 : length > 64 ? 60 : length
    if (piece >= 4 && piece <= 11 && offset < 2048) {
      out[d++] = (offset >>> 8) << 5 | (piece - 4) << 2 | TAG_COPY1
      out[d++] = offset & 0xff
    } else if (offset <= 0xffff) {
      out[d++] = (piece - 1) << 2 | TAG_COPY2
      out[d++] = offset & 0xff
      out[d++] = offset >>> 8
    } else {
      out[d++] = (piece - 1) << 2 | TAG_COPY4
      out[d++] = offset & 0xff
      out[d++] = (offset >>> 8) & 0xff
      out[d++] = (offset >>> 16) & 0xff
      out[d++] = offset >>> 24
    }
    length -= piece
  }
  return d
}

// headerBytes is the size of the header readHeader parsed last (a module variable rather than
// a result object: one allocation fewer per block).
let headerBytes = 0

// readHeader parses a block's declared length from b[0:] and sets headerBytes, or returns -1
// when b ends inside the header. It throws on a header longer than 5 bytes or a length above
// maxBlockBytes, before anything is allocated for the block.
function readHeader (b, maxBlockBytes, block) {
  let v = 0
  let mult = 1
  for (let k = 0; ; k++) {
    if (k === b.length) return -1
    if (k === MAX_HEADER_BYTES) throw new SnappyStreamError(ERR_CORRUPT, `block ${block}: length header longer than ${MAX_HEADER_BYTES} bytes`)
    const c = b[k]
    v += (c & 0x7f) * mult
    mult *= 128
    if (c < 0x80) {
      if (v > maxBlockBytes) throw new SnappyStreamError(ERR_BLOCK_TOO_LARGE, `block ${block}: declares ${v} bytes, bound is ${maxBlockBytes}`)
      headerBytes = k + 1
      return v
    }
  }
}

// Decoder decodes the blocks of one stream direction, in order. After an error every later
// call fails with the same error: the stream is out of step with its sender for good.
export class Decoder {
  constructor (windowBytes = DEFAULT_WINDOW_BYTES, maxBlockBytes = DEFAULT_MAX_BLOCK_BYTES) {
    checkWindow(windowBytes)
    if (!(Number.isSafeInteger(maxBlockBytes) && maxBlockBytes > 0)) throw new RangeError(`block bound ${maxBlockBytes}: want an integer > 0`)
    this.hist = new History(windowBytes)
    this.maxBlockBytes = maxBlockBytes
    this.blocks = 0
    this.err = null
  }

  // decode decodes exactly one block (a Uint8Array holding it and nothing else) and returns
  // its bytes in a new Uint8Array.
  decode (block) {
    if (this.err != null) throw this.err
    try {
      const n = readHeader(block, this.maxBlockBytes, this.blocks)
      if (n < 0) throw new SnappyStreamError(ERR_TRUNCATED, `block ${this.blocks}: length header truncated after ${block.length} bytes`)
      const hdr = headerBytes
      const used = hdr + this.decodeElements(block, hdr, n)
      if (used !== block.length) throw new SnappyStreamError(ERR_CORRUPT, `block ${this.blocks}: ${block.length - used} bytes after the end of the block`)
      const bs = this.hist.len
      this.hist.len = bs + n
      this.blocks++
      // A copy the caller owns (the history moves on); small ones come from Node's pool.
      const out = Buffer.allocUnsafe(n)
      out.set(this.hist.buf.subarray(bs, bs + n))
      return out
    } catch (err) {
      this.err = err instanceof SnappyStreamError ? err : new SnappyStreamError(ERR_CORRUPT, `block ${this.blocks}: ${err.message}`)
      throw this.err
    }
  }

  // decodeElements decodes the elements of src[s:] that make up n bytes into the history
  // (without committing them) and returns how many bytes of src they took.
  decodeElements (src, s0, n) {
    const blk = this.blocks
    // No element makes more than 64 bytes from 3 (a 2-byte-offset copy): a block too short for
    // its declared length is refused before its n bytes are reserved.
    if (n * 3 > 64 * (src.length - s0)) {
      throw new SnappyStreamError(ERR_TRUNCATED, `block ${blk}: declares ${n} bytes, more than its ${src.length - s0} bytes of elements can produce`)
    }
    const hist = this.hist
    const bs = hist.reserve(n)
    const buf = hist.buf
    const lo = hist.lowest(bs)
    const end = bs + n
    let o = bs
    let s = s0
    while (o < end) {
      if (s >= src.length) throw new SnappyStreamError(ERR_TRUNCATED, `block ${blk}: block ends after ${o - bs} of ${n} declared bytes`)
      const tag = src[s]
      let offset, length
      switch (tag & 3) {
        case TAG_LITERAL: {
          let x = tag >>> 2
          if (x < 60) {
            s++
          } else {
            const bytes = x - 59
            if (s + 1 + bytes > src.length) throw truncatedElement(blk, o - bs, n)
            x = 0
            for (let k = bytes; k >= 1; k--) x = x * 256 + src[s + k]
            s += 1 + bytes
          }
          length = x + 1
          if (length > end - o) throw new SnappyStreamError(ERR_CORRUPT, `block ${blk}: literal of ${length} bytes at output byte ${o - bs} runs past the declared length ${n}`)
          if (length > src.length - s) throw new SnappyStreamError(ERR_TRUNCATED, `block ${blk}: literal of ${length} bytes at output byte ${o - bs}, only ${src.length - s} bytes left in the input`)
          if (length <= 32) {
            // Short literals (most of them) are cheaper moved by hand than through a view.
            for (let k = 0; k < length; k++) buf[o + k] = src[s + k]
          } else {
            buf.set(src.subarray(s, s + length), o)
          }
          o += length
          s += length
          continue
        }
        case TAG_COPY1:
          if (s + 2 > src.length) throw truncatedElement(blk, o - bs, n)
          length = 4 + ((tag >>> 2) & 7)
          offset = (tag >>> 5) << 8 | src[s + 1]
          s += 2
          break
        case TAG_COPY2:
          if (s + 3 > src.length) throw truncatedElement(blk, o - bs, n)
          length = 1 + (tag >>> 2)
          offset = src[s + 1] | src[s + 2] << 8
          s += 3
          break
        default:
          if (s + 5 > src.length) throw truncatedElement(blk, o - bs, n)
          length = 1 + (tag >>> 2)
          offset = (src[s + 1] | src[s + 2] << 8 | src[s + 3] << 16 | src[s + 4] << 24) >>> 0
          s += 5
      }
      if (offset === 0 || offset > o - lo) {
        throw new SnappyStreamError(ERR_CORRUPT, `block ${blk}: copy offset ${offset} at output byte ${o - bs}, valid offsets are 1..${o - lo} (${bs - lo} history + ${o - bs} decoded)`)
      }
      if (length > end - o) throw new SnappyStreamError(ERR_CORRUPT, `block ${blk}: copy of ${length} bytes at output byte ${o - bs} runs past the declared length ${n}`)
      // A copy is at most 64 bytes: a forward byte loop, which is also what an overlapping
      // copy (offset < length) means, each byte repeating the one `offset` back.
      for (const stop = o + length; o < stop; o++) buf[o] = buf[o - offset]
    }
    return s - s0
  }

  reset () {
    this.hist = new History(this.hist.windowBytes)
    this.blocks = 0
    this.err = null
  }
}

function truncatedElement (block, o, n) {
  return new SnappyStreamError(ERR_TRUNCATED, `block ${block}: element at output byte ${o} cut off (${o} of ${n} bytes produced)`)
}

// StreamDecoder cuts a byte stream (chunks as the transport delivers them) into blocks and
// decodes each as soon as its last byte has arrived. It walks the elements of an incomplete
// block as bytes come, so a hostile length is refused before it is buffered: it holds at most
// 5 bytes of input per declared byte of the block in progress.
export class StreamDecoder {
  constructor (windowBytes = DEFAULT_WINDOW_BYTES, maxBlockBytes = DEFAULT_MAX_BLOCK_BYTES) {
    this.dec = new Decoder(windowBytes, maxBlockBytes)
    this.in = new Uint8Array(0)
    this.start = 0
    this.filled = 0 // in[start:filled] is buffered input
    this.block = null // {n, hdr, scanned, produced} of the block at in[start:]
    this.wireBytes = 0 // wire bytes of the blocks decoded
    this.rawBytes = 0
  }

  get blocks () { return this.dec.blocks }

  // push adds a chunk and yields the blocks it completed, decoded, in order; a bad block
  // throws after the good ones before it were yielded.
  * push (chunk) {
    if (this.dec.err != null) throw this.dec.err
    this.append(chunk)
    for (;;) {
      const done = this.scan()
      if (!done) break
      const b = this.block
      const blockEnd = this.start + b.hdr + b.scanned
      const bytes = this.dec.decode(this.in.subarray(this.start, blockEnd))
      this.wireBytes += blockEnd - this.start
      this.rawBytes += bytes.length
      this.start = blockEnd
      this.block = null
      yield bytes
    }
  }

  // finish checks that the stream ended between blocks.
  finish () {
    if (this.dec.err != null) throw this.dec.err
    if (this.filled > this.start) {
      this.dec.err = new SnappyStreamError(ERR_TRUNCATED, `block ${this.dec.blocks}: stream ends inside the block (${this.filled - this.start} bytes of it received)`)
      throw this.dec.err
    }
  }

  append (chunk) {
    const need = this.filled - this.start + chunk.length
    if (need > this.in.length) {
      const nb = new Uint8Array(Math.max(need, 2 * this.in.length, 4096))
      nb.set(this.in.subarray(this.start, this.filled))
      this.in = nb
    } else if (this.start > 0) {
      this.in.copyWithin(0, this.start, this.filled)
    }
    this.filled -= this.start
    this.start = 0
    this.in.set(chunk, this.filled)
    this.filled += chunk.length
  }

  // scan advances over the buffered elements of the block in progress and reports whether
  // the whole block is buffered.
  scan () {
    const buf = this.in.subarray(this.start, this.filled)
    if (this.block == null) {
      if (buf.length === 0) return false
      let n
      try {
        n = readHeader(buf, this.dec.maxBlockBytes, this.dec.blocks)
      } catch (err) {
        this.dec.err = err
        throw err
      }
      if (n < 0) return false
      this.block = { n, hdr: headerBytes, scanned: 0, produced: 0 }
    }
    const b = this.block
    let s = b.hdr + b.scanned
    let o = b.produced
    while (o < b.n && s < buf.length) {
      const tag = buf[s]
      let elem, n
      switch (tag & 3) {
        case TAG_LITERAL: {
          const x = tag >>> 2
          if (x < 60) {
            elem = 1
            n = x + 1
          } else {
            elem = x - 58
            if (s + elem > buf.length) break
            n = 1
            for (let k = elem - 1; k >= 1; k--) n += buf[s + k] * 2 ** (8 * (k - 1))
          }
          if (n > b.n - o) {
            this.dec.err = new SnappyStreamError(ERR_CORRUPT, `block ${this.dec.blocks}: literal of ${n} bytes at output byte ${o} runs past the declared length ${b.n}`)
            throw this.dec.err
          }
          elem += n
          break
        }
        case TAG_COPY1: elem = 2; n = 4 + ((tag >>> 2) & 7); break
        case TAG_COPY2: elem = 3; n = 1 + (tag >>> 2); break
        default: elem = 5; n = 1 + (tag >>> 2)
      }
      if (n === undefined || s + elem > buf.length) break
      s += elem
      o += n
    }
    b.scanned = s - b.hdr
    b.produced = o
    // A copy that overruns the declared length is the decoder's to report.
    return o >= b.n
  }
}

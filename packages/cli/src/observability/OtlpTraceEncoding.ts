/**
 * The spans of an OTLP/HTTP protobuf export (docs/operations.md "Metrics and traces"), written
 * in one pass into one growing buffer: the same bytes as Effect's own encoder
 * (OtlpSerialization's layerProtobuf), which builds an array per field, a BigInt per varint and
 * a copy per concat: profiled under load (`ours-otlp` in bench/README.md), that was most of a
 * traced request's extra CPU and garbage. Metrics, exported once an interval, keep Effect's
 * encoder.
 *
 * Wire format (opentelemetry.proto.trace.v1): a length-delimited field is its tag, the varint
 * length and the bytes; a nested message or a string is written in place with room kept for its
 * length, and moved when its length takes fewer bytes than kept, or more.
 */
import type { AnyValue, KeyValue } from "effect/observability/OtlpResource"
import type { TraceData } from "effect/observability/OtlpTracer"

type ResourceSpan = TraceData["resourceSpans"][number]
type ScopeSpan = ResourceSpan["scopeSpans"][number]
type Span = ScopeSpan["spans"][number]

const VARINT = 0
const FIXED64 = 1
const LENGTH_DELIMITED = 2

/** Each hex digit's value (either case); anything else counts 0, as Effect's encoder reads it. */
const NIBBLE = (() => {
  const table = new Uint8Array(128)
  for (let i = 0; i < 16; i++) {
    table["0123456789abcdef".charCodeAt(i)] = i
    table["0123456789ABCDEF".charCodeAt(i)] = i
  }
  return table
})()
const nibble = (c: number): number => (c < 128 ? NIBBLE[c]! : 0)

/** Text up to this many UTF-16 units is copied in a loop when it is ASCII (below 128: its length is one byte); longer text goes through TextEncoder at once. */
const SHORT = 64
const TWO_23 = 2 ** 23
const TWO_32 = 2 ** 32

const varintSize = (n: number): number => (n < 0x80 ? 1 : n < 0x4000 ? 2 : n < 0x200000 ? 3 : n < 0x10000000 ? 4 : 5)

/**
 * One buffer for every export, grown to the largest batch: an export is encoded at once (no
 * await), so two never share it, and its bytes are copied out when it is done.
 */
class Writer {
  buf = new Uint8Array(64 * 1024)
  pos = 0
  private readonly view8 = new DataView(new ArrayBuffer(8))
  private readonly bytes8 = new Uint8Array(this.view8.buffer)
  private readonly utf8 = new TextEncoder()

  private room(n: number): void {
    if (this.pos + n <= this.buf.length) return
    let size = this.buf.length * 2
    while (size < this.pos + n) size *= 2
    const next = new Uint8Array(size)
    next.set(this.buf.subarray(0, this.pos))
    this.buf = next
  }

  /** A varint of a whole number from 0 to 2^53. */
  varint(n: number): void {
    this.room(10)
    while (n >= 0x80) {
      this.buf[this.pos++] = (n % 0x80) | 0x80
      n = Math.floor(n / 0x80)
    }
    this.buf[this.pos++] = n
  }

  /** A varint of any 64-bit integer, negatives as their two's complement (as int64 is written). */
  varint64(n: bigint): void {
    let v = BigInt.asUintN(64, n)
    this.room(10)
    while (v >= 0x80n) {
      this.buf[this.pos++] = Number(v & 0x7fn) | 0x80
      v >>= 7n
    }
    this.buf[this.pos++] = Number(v)
  }

  tag(field: number, wire: number): void {
    this.varint(field * 8 + wire)
  }

  private eight(): void {
    this.room(8)
    this.buf.set(this.bytes8, this.pos)
    this.pos += 8
  }

  /**
   * A fixed64 from a decimal string of nanoseconds, as two 32-bit halves: up to 15 digits the
   * number is exact as a double; a time since 1970 is split into seconds and nanoseconds, and
   * seconds x 10^9 as (seconds x 5^9) x 2^9, each exact. Past the year 2096, through a BigInt.
   */
  fixed64(field: number, decimal: string): void {
    this.tag(field, FIXED64)
    const digits = decimal.length
    let low: number
    let high: number
    if (digits <= 15) {
      const n = Number(decimal)
      high = Math.floor(n / TWO_32)
      low = n - high * TWO_32
    } else {
      const seconds = Number(decimal.slice(0, digits - 9))
      if (!(seconds < 4_000_000_000)) {
        this.view8.setBigUint64(0, BigInt(decimal), true)
        return this.eight()
      }
      const m = seconds * 1_953_125
      const mHigh = Math.floor(m / TWO_23)
      low = (m - mHigh * TWO_23) * 512 + Number(decimal.slice(digits - 9))
      const carry = low >= TWO_32 ? 1 : 0
      low -= carry * TWO_32
      high = mHigh + carry
    }
    this.room(8)
    const buf = this.buf
    const at = this.pos
    buf[at] = low & 0xff
    buf[at + 1] = (low >>> 8) & 0xff
    buf[at + 2] = (low >>> 16) & 0xff
    buf[at + 3] = low >>> 24
    buf[at + 4] = high & 0xff
    buf[at + 5] = (high >>> 8) & 0xff
    buf[at + 6] = (high >>> 16) & 0xff
    buf[at + 7] = high >>> 24
    this.pos = at + 8
  }

  double(field: number, value: number): void {
    this.tag(field, FIXED64)
    this.view8.setFloat64(0, value, true)
    this.eight()
  }

  /**
   * UTF-8 written in place. Short ASCII text (names, keys, most values) is copied a unit a byte
   * after its one-byte length; other text is encoded by TextEncoder with room for its longest
   * length kept before it, and moved back when its length is shorter.
   */
  string(field: number, value: string): void {
    this.tag(field, LENGTH_DELIMITED)
    const n = value.length
    // At most 3 bytes a UTF-16 unit, and the length's varint.
    this.room(10 + n * 3)
    const buf = this.buf
    if (n <= SHORT) {
      const ascii = this.pos + 1
      let i = 0
      while (i < n) {
        const c = value.charCodeAt(i)
        if (c >= 0x80) break
        buf[ascii + i++] = c
      }
      if (i === n) {
        buf[this.pos] = n
        this.pos = ascii + n
        return
      }
    }
    const kept = varintSize(n * 3)
    const start = this.pos + kept
    const { written } = this.utf8.encodeInto(value, buf.subarray(start))
    const size = varintSize(written)
    if (size < kept) buf.copyWithin(this.pos + size, start, start + written)
    this.varint(written)
    this.pos += written
  }

  bytes(bytes: Uint8Array): void {
    this.room(bytes.length)
    this.buf.set(bytes, this.pos)
    this.pos += bytes.length
  }

  /** Bytes written as hex (trace and span ids). */
  hex(field: number, hex: string): void {
    this.tag(field, LENGTH_DELIMITED)
    const n = hex.length >> 1
    this.varint(n)
    this.room(n)
    const buf = this.buf
    for (let i = 0; i < n; i++) buf[this.pos++] = (nibble(hex.charCodeAt(2 * i)) << 4) | nibble(hex.charCodeAt(2 * i + 1))
  }

  /** Opens a nested message: its fields follow, then `end` with what this returns writes its length before them. */
  begin(field: number): number {
    this.tag(field, LENGTH_DELIMITED)
    this.room(1)
    return ++this.pos
  }

  /** Closes the message `begin` opened at `start`: one byte was kept for its length; a longer length moves the fields. */
  end(start: number): void {
    const length = this.pos - start
    const extra = varintSize(length) - 1
    if (extra > 0) {
      this.room(extra)
      this.buf.copyWithin(start + extra, start, this.pos)
      this.pos += extra
    }
    let at = start - 1
    let n = length
    while (n >= 0x80) {
      this.buf[at++] = (n % 0x80) | 0x80
      n = Math.floor(n / 0x80)
    }
    this.buf[at] = n
  }

  /** The bytes written since `reset`, copied out of the kept buffer. */
  done(): Uint8Array {
    return this.buf.slice(0, this.pos)
  }

  reset(): void {
    this.pos = 0
  }
}

const anyValue = (w: Writer, v: AnyValue): void => {
  if (v.stringValue !== undefined && v.stringValue !== null) w.string(1, v.stringValue)
  else if (v.boolValue !== undefined && v.boolValue !== null) {
    w.tag(2, VARINT)
    w.varint(v.boolValue ? 1 : 0)
  } else if (v.intValue !== undefined && v.intValue !== null) {
    w.tag(3, VARINT)
    const n = v.intValue
    if (typeof n === "number" && n >= 0 && Number.isSafeInteger(n)) w.varint(n)
    else w.varint64(BigInt(n))
  } else if (v.doubleValue !== undefined && v.doubleValue !== null) w.double(4, v.doubleValue)
  else if (v.arrayValue !== undefined) {
    const array = w.begin(5)
    for (const x of v.arrayValue.values) {
      const item = w.begin(1)
      anyValue(w, x)
      w.end(item)
    }
    w.end(array)
  } else if (v.kvlistValue !== undefined) {
    const list = w.begin(6)
    keyValues(w, 1, v.kvlistValue.values)
    w.end(list)
  } else if (v.bytesValue !== undefined) {
    w.tag(7, LENGTH_DELIMITED)
    w.varint(v.bytesValue.length)
    w.bytes(v.bytesValue)
  }
}

const keyValues = (w: Writer, field: number, kvs: ReadonlyArray<KeyValue>): void => {
  for (let i = 0; i < kvs.length; i++) {
    const kv = kvs[i]!
    const pair = w.begin(field)
    w.string(1, kv.key)
    const value = w.begin(2)
    anyValue(w, kv.value)
    w.end(value)
    w.end(pair)
  }
}

const count = (w: Writer, field: number, n: number): void => {
  if (n > 0) {
    w.tag(field, VARINT)
    w.varint(n)
  }
}

const optionalString = (w: Writer, field: number, value: string | undefined): void => {
  if (value !== undefined && value !== "") w.string(field, value)
}

const span = (w: Writer, s: Span): void => {
  w.hex(1, s.traceId)
  w.hex(2, s.spanId)
  if (s.parentSpanId !== undefined) w.hex(4, s.parentSpanId)
  w.string(5, s.name)
  w.tag(6, VARINT)
  w.varint(s.kind)
  w.fixed64(7, s.startTimeUnixNano)
  w.fixed64(8, s.endTimeUnixNano)
  keyValues(w, 9, s.attributes)
  count(w, 10, s.droppedAttributesCount)
  for (const e of s.events) {
    const event = w.begin(11)
    w.fixed64(1, e.timeUnixNano)
    w.string(2, e.name)
    keyValues(w, 3, e.attributes)
    count(w, 4, e.droppedAttributesCount)
    w.end(event)
  }
  count(w, 12, s.droppedEventsCount)
  for (const l of s.links) {
    const link = w.begin(13)
    w.hex(1, l.traceId)
    w.hex(2, l.spanId)
    keyValues(w, 4, l.attributes)
    count(w, 5, l.droppedAttributesCount)
    w.end(link)
  }
  count(w, 14, s.droppedLinksCount)
  const status = w.begin(15)
  optionalString(w, 2, s.status.message)
  w.tag(3, VARINT)
  w.varint(s.status.code)
  w.end(status)
}

const writer = new Writer()

/** TracesData (ExportTraceServiceRequest) as protobuf. */
export const encodeTraces = (data: TraceData): Uint8Array => {
  const w = writer
  w.reset()
  for (const rs of data.resourceSpans) {
    const resourceSpans = w.begin(1)
    const resource = w.begin(1)
    keyValues(w, 1, rs.resource.attributes)
    count(w, 2, rs.resource.droppedAttributesCount)
    w.end(resource)
    for (const ss of rs.scopeSpans) {
      const scopeSpans = w.begin(2)
      const scope = w.begin(1)
      w.string(1, ss.scope.name)
      optionalString(w, 2, ss.scope.version)
      w.end(scope)
      for (let i = 0; i < ss.spans.length; i++) {
        const one = w.begin(2)
        span(w, ss.spans[i]!)
        w.end(one)
      }
      optionalString(w, 3, ss.schemaUrl)
      w.end(scopeSpans)
    }
    optionalString(w, 3, rs.schemaUrl)
    w.end(resourceSpans)
  }
  return w.done()
}

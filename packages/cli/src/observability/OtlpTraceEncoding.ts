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
import type { AnyValue, KeyValue, Resource } from "effect/observability/OtlpResource"
import type { TraceData } from "effect/observability/OtlpTracer"

type ResourceSpan = TraceData["resourceSpans"][number]
type ScopeSpan = ResourceSpan["scopeSpans"][number]
type Span = ScopeSpan["spans"][number]

const VARINT = 0
const FIXED64 = 1
const LENGTH_DELIMITED = 2

/** A hex digit's value (either case); anything else counts 0, as Effect's encoder reads it. */
const nibble = (c: number): number => (c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : 0)

const varintSize = (n: number): number => (n < 0x80 ? 1 : n < 0x4000 ? 2 : n < 0x200000 ? 3 : n < 0x10000000 ? 4 : 5)

class Writer {
  buf = new Uint8Array(16 * 1024)
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

  /** A fixed64 from a decimal string of nanoseconds. */
  fixed64(field: number, decimal: string): void {
    this.tag(field, FIXED64)
    this.view8.setBigUint64(0, BigInt(decimal), true)
    this.eight()
  }

  double(field: number, value: number): void {
    this.tag(field, FIXED64)
    this.view8.setFloat64(0, value, true)
    this.eight()
  }

  /** UTF-8 written in place: room for its longest length is kept before it, and the text moved back when its length is shorter. */
  string(field: number, value: string): void {
    this.tag(field, LENGTH_DELIMITED)
    // At most 3 bytes a UTF-16 unit.
    const kept = varintSize(value.length * 3)
    // The length's varint is written after the text: its room too, so nothing after `pos` moves.
    this.room(10 + value.length * 3)
    const start = this.pos + kept
    const { written } = this.utf8.encodeInto(value, this.buf.subarray(start))
    const size = varintSize(written)
    if (size < kept) this.buf.copyWithin(this.pos + size, start, start + written)
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
    for (let i = 0; i < n; i++) this.buf[this.pos++] = (nibble(hex.charCodeAt(2 * i)) << 4) | nibble(hex.charCodeAt(2 * i + 1))
  }

  /** A nested message: `body` writes its fields. */
  message(field: number, body: () => void): void {
    this.tag(field, LENGTH_DELIMITED)
    this.room(1)
    const start = ++this.pos
    body()
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

  done(): Uint8Array {
    return this.buf.slice(0, this.pos)
  }
}

const anyValue = (w: Writer, v: AnyValue): void => {
  if (v.stringValue !== undefined && v.stringValue !== null) w.string(1, v.stringValue)
  else if (v.boolValue !== undefined && v.boolValue !== null) {
    w.tag(2, VARINT)
    w.varint(v.boolValue ? 1 : 0)
  } else if (v.intValue !== undefined && v.intValue !== null) {
    w.tag(3, VARINT)
    w.varint64(BigInt(v.intValue))
  } else if (v.doubleValue !== undefined && v.doubleValue !== null) w.double(4, v.doubleValue)
  else if (v.arrayValue !== undefined) {
    const values = v.arrayValue.values
    w.message(5, () => values.forEach((x) => w.message(1, () => anyValue(w, x))))
  } else if (v.kvlistValue !== undefined) {
    const values = v.kvlistValue.values
    w.message(6, () => keyValues(w, 1, values))
  } else if (v.bytesValue !== undefined) {
    w.tag(7, LENGTH_DELIMITED)
    w.varint(v.bytesValue.length)
    w.bytes(v.bytesValue)
  }
}

const keyValues = (w: Writer, field: number, kvs: ReadonlyArray<KeyValue>): void => {
  for (const kv of kvs) {
    w.message(field, () => {
      w.string(1, kv.key)
      w.message(2, () => anyValue(w, kv.value))
    })
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

const resource = (w: Writer, r: Resource): void => {
  keyValues(w, 1, r.attributes)
  count(w, 2, r.droppedAttributesCount)
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
    w.message(11, () => {
      w.fixed64(1, e.timeUnixNano)
      w.string(2, e.name)
      keyValues(w, 3, e.attributes)
      count(w, 4, e.droppedAttributesCount)
    })
  }
  count(w, 12, s.droppedEventsCount)
  for (const l of s.links) {
    w.message(13, () => {
      w.hex(1, l.traceId)
      w.hex(2, l.spanId)
      keyValues(w, 4, l.attributes)
      count(w, 5, l.droppedAttributesCount)
    })
  }
  count(w, 14, s.droppedLinksCount)
  w.message(15, () => {
    optionalString(w, 2, s.status.message)
    w.tag(3, VARINT)
    w.varint(s.status.code)
  })
}

/** TracesData (ExportTraceServiceRequest) as protobuf. */
export const encodeTraces = (data: TraceData): Uint8Array => {
  const w = new Writer()
  for (const rs of data.resourceSpans) {
    w.message(1, () => {
      w.message(1, () => resource(w, rs.resource))
      for (const ss of rs.scopeSpans) {
        w.message(2, () => {
          w.message(1, () => {
            w.string(1, ss.scope.name)
            optionalString(w, 2, ss.scope.version)
          })
          for (const s of ss.spans) w.message(2, () => span(w, s))
          optionalString(w, 3, ss.schemaUrl)
        })
      }
      optionalString(w, 3, rs.schemaUrl)
    })
  }
  return w.done()
}

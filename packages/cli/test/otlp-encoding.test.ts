/**
 * The spans' protobuf encoding (src/observability/OtlpTraceEncoding.ts) writes the same bytes as
 * Effect's own OTLP protobuf serialization, for spans with every kind of attribute value, events,
 * links, non-ASCII and long strings, and batches whose lengths take several varint bytes; and at
 * the edges of its shortcuts (times as two 32-bit halves, whole numbers, short ASCII text).
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import type * as HttpBody from "effect/http/HttpBody"
import type { KeyValue } from "effect/observability/OtlpResource"
import * as OtlpSerialization from "effect/observability/OtlpSerialization"
import type { TraceData } from "effect/observability/OtlpTracer"
import { encodeTraces } from "../src/observability/OtlpTraceEncoding.ts"

const effects = (data: TraceData) =>
  Effect.runSync(Effect.map(Effect.service(OtlpSerialization.OtlpSerialization), (s) => (s.traces(data) as HttpBody.Uint8Array).body).pipe(
    Effect.provide(OtlpSerialization.layerProtobuf)
  ))

const hex = (n: number, i: number) => (i.toString(16).padStart(4, "0") + "9f3a".repeat(n)).slice(0, n * 2)

const attributes = (i: number): Array<KeyValue> => [
  { key: "http.route", value: { stringValue: "/api/v1/members/:id" } },
  { key: "request_id", value: { stringValue: `req_${i}` } },
  { key: "db.statement", value: { stringValue: `SELECT m.id, m.name, m.status FROM members m WHERE m.tenant_id = $1 AND m.id = $2 -- ${"é".repeat(i % 3)}` } },
  { key: "ok", value: { boolValue: i % 2 === 0 } },
  { key: "rows", value: { intValue: i * 1000 } },
  { key: "negative", value: { intValue: -i - 1 } },
  { key: "big", value: { intValue: "9007199254740993" } },
  { key: "ratio", value: { doubleValue: i / 7 } },
  { key: "list", value: { arrayValue: { values: [{ stringValue: "a" }, { intValue: 2 }, { boolValue: false }] } } },
  { key: "map", value: { kvlistValue: { values: [{ key: "k", value: { stringValue: "ü".repeat(50) } }] } } },
  { key: "raw", value: { bytesValue: new Uint8Array([0, 1, 254, 255]) } },
  { key: "empty", value: {} },
  { key: "", value: { stringValue: "" } }
]

const traces = (spans: number): TraceData => ({
  resourceSpans: [{
    resource: { attributes: [{ key: "service.name", value: { stringValue: "chamber" } }, { key: "deployment.environment", value: { stringValue: "test" } }], droppedAttributesCount: 0 },
    scopeSpans: [{
      scope: { name: "chamber", version: "" },
      spans: Array.from({ length: spans }, (_, i) => ({
        traceId: hex(16, i),
        spanId: hex(8, i + 1),
        parentSpanId: i % 3 === 0 ? undefined : hex(8, i),
        name: i % 5 === 0 ? "http.server GET" : `sql.execute ${"x".repeat(i % 200)}`,
        kind: i % 4,
        startTimeUnixNano: String(1_764_000_000_000_000_000n + BigInt(i) * 1_234_567n),
        endTimeUnixNano: String(1_764_000_000_000_000_000n + BigInt(i) * 2_345_678n),
        attributes: attributes(i),
        droppedAttributesCount: i % 7 === 0 ? 2 : 0,
        events: i % 4 === 0 ? [{ name: "exception", timeUnixNano: "1764000000000000123", attributes: attributes(i).slice(0, 3), droppedAttributesCount: 1 }] : [],
        droppedEventsCount: i % 9 === 0 ? 300 : 0,
        links: i % 6 === 0 ? [{ traceId: hex(16, i + 7), spanId: hex(8, i + 7), attributes: [], droppedAttributesCount: 0 }] : [],
        droppedLinksCount: 0,
        status: i % 8 === 0 ? { code: 2, message: "the destination answered 500" } : { code: 1 }
      }))
    }],
    schemaUrl: "https://opentelemetry.io/schemas/1.24.0"
  }]
})

describe("OTLP protobuf encoding of spans", () => {
  it("writes the bytes Effect's encoder writes", () => {
    for (const n of [0, 1, 2, 40, 700]) {
      const ours = encodeTraces(traces(n))
      const theirs = effects(traces(n))
      assert.strictEqual(ours.length, theirs.length, `${n} spans: length`)
      assert.isTrue(Buffer.from(ours).equals(Buffer.from(theirs)), `${n} spans: bytes`)
    }
    assert.isAbove(encodeTraces(traces(700)).length, 1 << 14, "a batch whose length takes three varint bytes")
  })

  it("writes the same bytes at the edges of its shortcuts: times, whole numbers, short ASCII text", () => {
    const times = ["0", "1", "4294967295", "4294967296", "999999999999999", "1000000000000000", "1764000000999999999", "1764000002000000000", "1764000002999999999", "3999999999999999999", "4000000000000000000", "18446744073709551615"]
    const texts = ["", "a".repeat(63), "a".repeat(64), "a".repeat(65), `${"a".repeat(63)}é`, "a".repeat(127), "a".repeat(128), "a".repeat(300), `é${"a".repeat(200)}`, "\u007f\u0080", "😀"]
    const ints = [0, 1, 127, 128, Number.MAX_SAFE_INTEGER, -1, Number.MIN_SAFE_INTEGER, "18446744073709551615"]
    const base = traces(1)
    const span = base.resourceSpans[0]!.scopeSpans[0]!.spans[0]!
    const spans = times.map((time, i) => ({
      ...span,
      name: texts[i % texts.length]!,
      startTimeUnixNano: time,
      endTimeUnixNano: times[times.length - 1 - i]!,
      attributes: [
        ...texts.map((text, j) => ({ key: text, value: { stringValue: texts[(i + j) % texts.length]! } })),
        ...ints.map((int) => ({ key: "n", value: { intValue: int } }))
      ]
    }))
    const data: TraceData = { resourceSpans: [{ ...base.resourceSpans[0]!, scopeSpans: [{ ...base.resourceSpans[0]!.scopeSpans[0]!, spans }] }] }
    assert.isTrue(Buffer.from(encodeTraces(data)).equals(Buffer.from(effects(data))))
  })

  it("writes a scope's version and no resource spans at all", () => {
    const data: TraceData = { resourceSpans: [{ resource: { attributes: [], droppedAttributesCount: 3 }, scopeSpans: [{ scope: { name: "s", version: "1.2" }, spans: [] }] }] }
    assert.isTrue(Buffer.from(encodeTraces(data)).equals(Buffer.from(effects(data))))
    assert.strictEqual(encodeTraces({ resourceSpans: [] }).length, 0)
  })
})

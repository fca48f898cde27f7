/**
 * What operators see (docs/operations.md "Metrics" and "Traces", ruling 33): `chamber serve` with
 * CHAMBER_METRICS_PORT serves Prometheus text on a listener of its own after real traffic (a 429,
 * deliveries to a real HTTPS receiver that fails, hangs, then answers), and with
 * OTEL_EXPORTER_OTLP_ENDPOINT sends spans and metrics to a real OTLP/HTTP receiver, and keeps
 * answering once that receiver is gone.
 */
import { assert, describe, it, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import { createServer, type IncomingMessage, METHODS, type Server } from "node:http"
import { readFileSync } from "node:fs"
import { type AddressInfo, connect } from "node:net"
import { fileURLToPath } from "node:url"
import protobuf from "protobufjs"
import { runtimes } from "@chamber/pg-adapter/testing"
import { BIN, chamber, Env, envLayer, freePort, json, post, serving } from "./harness.ts"
import { chamberWithKey as hookChamber, receiverWithTrust } from "./hookFixtures.ts"
import { observabilityFromEnv } from "../src/observability/Observability.ts"

/** Real time passing (the suite's clock is a test clock). */
const pause = (ms: number) => Effect.promise(() => new Promise<void>((resolve) => setTimeout(resolve, ms)))

interface Sample {
  readonly name: string
  readonly labels: Record<string, string>
  readonly value: number
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(?:,|$)/gy

/** Prometheus's text format, strictly: every line a comment, a TYPE or HELP, or a well-formed sample. */
const parsePrometheus = (text: string) => {
  const samples: Array<Sample> = []
  const types = new Map<string, string>()
  for (const line of text.split("\n")) {
    if (line === "") continue
    const type = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line)
    if (type !== null) {
      types.set(type[1]!, type[2]!)
      continue
    }
    if (/^# HELP \S+ .*$/.test(line)) continue
    const m = SAMPLE.exec(line)
    assert.isNotNull(m, `not a Prometheus sample line: ${line}`)
    const labels: Record<string, string> = {}
    const body = m![2] ?? ""
    LABEL.lastIndex = 0
    let consumed = 0
    for (let l = LABEL.exec(body); l !== null; l = LABEL.exec(body)) {
      labels[l[1]!] = l[2]!
      consumed = LABEL.lastIndex
    }
    assert.strictEqual(consumed, body.length, `labels not well-formed: ${line}`)
    const value = m![3] === "+Inf" ? Infinity : Number(m![3])
    assert.isFalse(Number.isNaN(value), `value not a number: ${line}`)
    samples.push({ name: m![1]!, labels, value })
  }
  return { samples, types }
}

const scrape = (port: number) =>
  Effect.promise(async () => {
    const res = await fetch(`http://127.0.0.1:${port}/metrics`)
    assert.strictEqual(res.status, 200)
    assert.match(res.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/)
    return parsePrometheus(await res.text())
  })

const valueOf = (samples: ReadonlyArray<Sample>, name: string, labels: Record<string, string> = {}) =>
  samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((sum, s) => sum + s.value, 0)

const chamberWithKey = hookChamber("all")

const request = (port: number, path: string, key: string, headers: Record<string, string> = {}) =>
  Effect.promise(async () => {
    const res = await fetch(`http://127.0.0.1:${port}${path}`, { headers: { authorization: `Bearer ${key}`, ...headers } })
    return { status: res.status, body: await res.text() }
  })

/** Polls `check` until it holds (each try a fresh scrape), failing with the last sample set. */
const eventually = <A>(attempt: Effect.Effect<A>, holds: (a: A) => boolean, what: string, tries = 150) =>
  Effect.gen(function*() {
    let last = yield* attempt
    for (let i = 0; i < tries && !holds(last); i++) {
      yield* pause(200)
      last = yield* attempt
    }
    assert.isTrue(holds(last), what)
    return last
  })

interface Collected {
  readonly path: string
  readonly contentType: string
  readonly body: Buffer
}

/** A real OTLP/HTTP receiver: records each POST (/v1/traces, /v1/metrics) and answers 200. */
const startCollector = () =>
  new Promise<{ readonly url: string; readonly got: Array<Collected>; readonly close: () => Promise<void> }>((resolve) => {
    const got: Array<Collected> = []
    const server: Server = createServer((req: IncomingMessage, res) => {
      const chunks: Array<Buffer> = []
      req.on("data", (c: Buffer) => chunks.push(c))
      req.on("end", () => {
        got.push({ path: req.url ?? "", contentType: req.headers["content-type"] ?? "", body: Buffer.concat(chunks) })
        res.writeHead(200, { "content-type": "application/json" }).end("{}")
      })
    })
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resolve({
        url: `http://127.0.0.1:${port}`,
        got,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => done())
            server.closeAllConnections()
          })
      })
    })
  })

/** A chamber with a key, and `chamber serve --no-relay` exporting (OTLP/HTTP, JSON unless `env` says otherwise) to a collector of the test's, with `env`. */
const exporting = (env: Record<string, string>) =>
  Effect.gen(function*() {
    const collector = yield* Effect.acquireRelease(Effect.promise(startCollector), (c) => Effect.promise(c.close))
    const { key } = yield* chamberWithKey
    const server = yield* serving(["--no-relay"], { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", ...env })
    return { collector, key, server }
  })

type OtlpSpan = { traceId: string; spanId: string; parentSpanId?: string; name: string; attributes: Array<{ key: string; value: any }> }

const attr = (attributes: ReadonlyArray<{ key: string; value: any }>, key: string) => {
  const found = attributes.find((a) => a.key === key)?.value
  return found === undefined ? undefined : found.stringValue ?? found.intValue ?? found.doubleValue ?? found.boolValue
}

/**
 * OTLP's trace and metrics messages as opentelemetry-proto defines them (opentelemetry/proto/
 * trace/v1, metrics/v1, common/v1, resource/v1), the fields these tests read; protobufjs skips
 * the others.
 */
const OTLP_TRACE_PROTO = `
syntax = "proto3";
package otlp;
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; }
message Resource { repeated KeyValue attributes = 1; }
message ScopeSpans { repeated Span spans = 2; }
message Span {
  bytes trace_id = 1;
  bytes span_id = 2;
  bytes parent_span_id = 4;
  string name = 5;
  repeated KeyValue attributes = 9;
  repeated Event events = 11;
  Status status = 15;
}
message Event { string name = 2; repeated KeyValue attributes = 3; }
message Status { string message = 2; int32 code = 3; }
message KeyValue { string key = 1; AnyValue value = 2; }
message AnyValue {
  oneof value {
    string string_value = 1;
    bool bool_value = 2;
    int64 int_value = 3;
    double double_value = 4;
    ArrayValue array_value = 5;
    bytes bytes_value = 7;
  }
}
message ArrayValue { repeated AnyValue values = 1; }
message ExportMetricsServiceRequest { repeated ResourceMetrics resource_metrics = 1; }
message ResourceMetrics { Resource resource = 1; repeated ScopeMetrics scope_metrics = 2; }
message ScopeMetrics { repeated Metric metrics = 2; }
message Metric { string name = 1; string description = 2; }
`
const otlpProto = protobuf.parse(OTLP_TRACE_PROTO).root
const ExportTraceServiceRequest = otlpProto.lookupType("otlp.ExportTraceServiceRequest")
const ExportMetricsServiceRequest = otlpProto.lookupType("otlp.ExportMetricsServiceRequest")

/** An export's body as OTLP/JSON has it, whichever protocol sent it: protobuf decoded, ids as hex. */
const exportOf = (g: Collected): any => {
  if (g.contentType !== "application/x-protobuf") return JSON.parse(g.body.toString("utf8"))
  const type = g.path === "/v1/traces" ? ExportTraceServiceRequest : ExportMetricsServiceRequest
  const object = type.toObject(type.decode(g.body), { longs: String, bytes: String, arrays: true })
  // Ids are hex in OTLP/JSON; protobufjs gives bytes as base64.
  for (const rs of object.resourceSpans ?? []) {
    for (const ss of rs.scopeSpans ?? []) {
      for (const span of ss.spans ?? []) {
        for (const id of ["traceId", "spanId", "parentSpanId"]) {
          if (span[id] !== undefined) span[id] = Buffer.from(span[id], "base64").toString("hex")
        }
      }
    }
  }
  return object
}

const spansOf = (got: ReadonlyArray<Collected>) =>
  got.filter((g) => g.path === "/v1/traces").flatMap((g) => {
    const data = exportOf(g)
    return data.resourceSpans.flatMap((rs: any) =>
      rs.scopeSpans.flatMap((ss: any) => ss.spans.map((span: OtlpSpan) => ({ span, resource: rs.resource.attributes })))
    ) as Array<{ span: OtlpSpan; resource: Array<{ key: string; value: any }> }>
  })

const WEBHOOK_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw5dL4Y6sZtQ0="

interface Leaking {
  readonly method: string
  readonly path: string
  readonly body?: unknown
}

/** Requests carrying the chamber's key, another key and a webhook secret in a query, a path and a body. */
const leakingRequests = (key: string, other: string): ReadonlyArray<Leaking> => [
  { method: "GET", path: `/api/v1/members?bearer=${key}&page=1` },
  { method: "GET", path: `/api/v1/members?api_key=plain-value&name=${encodeURIComponent(other)}` },
  { method: "GET", path: `/api/v1/members/${other}` },
  { method: "GET", path: `/api/v1/${key}/members` },
  { method: "GET", path: `/api/v1/changes?types=${WEBHOOK_SECRET}` },
  { method: "GET", path: `/api/v1/changes?types=member.created,${encodeURIComponent(WEBHOOK_SECRET)}` },
  { method: "POST", path: "/api/v1/hooks", body: { url: `https://example.com/hook?token=${WEBHOOK_SECRET}`, events: [WEBHOOK_SECRET] } },
  { method: "POST", path: "/api/v1/members", body: { name: other, status: key } },
  { method: "PATCH", path: `/api/v1/members/1?secret=${WEBHOOK_SECRET}`, body: { email: other } }
]

const send = (port: number, key: string, r: Leaking, requestId: string) =>
  Effect.promise(async () => {
    const res = await fetch(`http://127.0.0.1:${port}${r.path}`, {
      method: r.method,
      headers: { authorization: `Bearer ${key}`, "x-request-id": requestId, ...(r.body === undefined ? {} : { "content-type": "application/json" }) },
      ...(r.body === undefined ? {} : { body: JSON.stringify(r.body) })
    })
    await res.arrayBuffer()
    return res.status
  })

/** The names docs/operations.md's "Span attributes" lists. */
const documentedSpanAttributes = () => {
  const doc = readFileSync(fileURLToPath(new URL("../../../docs/operations.md", import.meta.url)), "utf8")
  const section = doc.slice(doc.indexOf("### Span attributes"), doc.indexOf("###", doc.indexOf("### Span attributes") + 4))
  return [...section.matchAll(/^\| `([^`]+)`/gm)].map((m) => m[1]!)
}

/** Neither key nor the secret, whole or the part after its prefix, percent-encoded or not; nor a secret-named parameter's value. */
const assertNoSecret = (text: string, ...keys: ReadonlyArray<string>) => {
  for (const secret of [...keys, WEBHOOK_SECRET]) {
    const body = secret.slice(secret.indexOf("_") + 1, secret.indexOf("_") + 21)
    assert.notInclude(text, body)
    assert.notInclude(text, encodeURIComponent(secret).slice(secret.indexOf("_") + 1, secret.indexOf("_") + 21))
  }
  assert.notInclude(text, "plain-value")
}

/** OpenTelemetry's standard methods, labelled as themselves; any other is `_OTHER`. */
const STANDARD_METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE"]

/**
 * One request over a socket of its own, any method Node parses, with the key; resolves with the
 * status line's code and whether the API answered it (an answer of the API carries X-Request-Id),
 * or 0 when the connection closed without an answer.
 */
const rawRequest = (port: number, method: string, path: string, key: string) =>
  new Promise<{ readonly status: number; readonly answered: boolean }>((resolve) => {
    const socket = connect(port, "127.0.0.1")
    let got = ""
    const done = () => {
      const status = /^HTTP\/1\.1 (\d{3})/.exec(got)
      resolve({ status: status === null ? 0 : Number(status[1]), answered: /\r\nx-request-id: /i.test(got) })
    }
    socket.setTimeout(30_000, () => socket.destroy())
    socket.on("data", (d) => (got += d.toString("latin1")))
    socket.on("close", done)
    socket.on("error", () => {})
    socket.end(`${method} ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAuthorization: Bearer ${key}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n`)
  })

/** Runs `work` over `items`, `width` at a time. */
const inTurns = async <A, B>(items: ReadonlyArray<A>, width: number, work: (a: A) => Promise<B>) => {
  const out: Array<B> = []
  let next = 0
  await Promise.all(Array.from({ length: width }, async () => {
    while (next < items.length) out.push(await work(items[next++]!))
  }))
  return out
}

describe("OTLP protocols", () => {
  it("spans go as JSON and metrics as protobuf unless OTEL_EXPORTER_OTLP_PROTOCOL or a signal's own variable says otherwise; a bad value is named", () => {
    const otlp = (env: Record<string, string>) => observabilityFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318", ...env }).otlp!
    const protocols = (env: Record<string, string>) => [otlp(env).tracesProtocol, otlp(env).metricsProtocol]
    assert.deepStrictEqual(protocols({}), ["http/json", "http/protobuf"])
    assert.deepStrictEqual(protocols({ OTEL_EXPORTER_OTLP_PROTOCOL: " " }), ["http/json", "http/protobuf"])
    assert.deepStrictEqual(protocols({ OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf" }), ["http/protobuf", "http/protobuf"])
    assert.deepStrictEqual(protocols({ OTEL_EXPORTER_OTLP_PROTOCOL: "http/json" }), ["http/json", "http/json"])
    assert.deepStrictEqual(protocols({ OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", OTEL_EXPORTER_OTLP_METRICS_PROTOCOL: "http/protobuf" }), ["http/json", "http/protobuf"])
    assert.deepStrictEqual(protocols({ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "http/protobuf" }), ["http/protobuf", "http/protobuf"])
    assert.throws(() => otlp({ OTEL_EXPORTER_OTLP_PROTOCOL: "grpc" }), /OTEL_EXPORTER_OTLP_PROTOCOL must be http\/protobuf or http\/json, not "grpc"/)
    assert.throws(() => otlp({ OTEL_EXPORTER_OTLP_TRACES_PROTOCOL: "json" }), /OTEL_EXPORTER_OTLP_TRACES_PROTOCOL must be/)
  })
})

describe("CHAMBER_METRICS_HOST", () => {
  it("the metrics listener binds 127.0.0.1 unless CHAMBER_METRICS_HOST says otherwise, whatever the API's HOST", () => {
    assert.strictEqual(observabilityFromEnv({ CHAMBER_METRICS_PORT: "9464" }).metricsHost, "127.0.0.1")
    assert.strictEqual(observabilityFromEnv({ CHAMBER_METRICS_PORT: "9464", HOST: "0.0.0.0" }).metricsHost, "127.0.0.1")
    assert.strictEqual(observabilityFromEnv({ CHAMBER_METRICS_PORT: "9464", HOST: "0.0.0.0", CHAMBER_METRICS_HOST: " " }).metricsHost, "127.0.0.1")
    assert.strictEqual(observabilityFromEnv({ CHAMBER_METRICS_PORT: "9464", CHAMBER_METRICS_HOST: "10.0.0.5" }).metricsHost, "10.0.0.5")
  })
})

for (const rt of runtimes()) {
  describe(`metrics and traces of chamber serve on ${rt.name}`, () => {
    layer(envLayer(rt), { timeout: 300_000 })((it) => {
      it.effect("GET /metrics on its own port: every metric after real traffic, route templates, no chamber or key; the due gauge rises while a receiver is down and falls after", () =>
        Effect.gen(function*() {
          const { receiver, env } = yield* receiverWithTrust
          // Down: the first deliveries fail, then the receiver hangs until each attempt times out.
          receiver.script(500, 500)
          receiver.setDefault({ hang: true })
          const { tenant, key } = yield* chamberWithKey
          const metricsPort = yield* freePort()
          const server = yield* serving([], {
            ...env,
            CHAMBER_METRICS_PORT: String(metricsPort),
            CHAMBER_RATE_LIMIT_PER_MINUTE: "40",
            CHAMBER_WEBHOOK_TIMEOUT: "3s",
            CHAMBER_WEBHOOK_RETRY_DELAYS: "100ms,100ms,100ms"
          })
          yield* Effect.promise(() => server.waitFor(new RegExp(`Metrics on http://127\\.0\\.0\\.1:${metricsPort}/metrics`)))

          // The API port serves no metrics: the same 404 as any unknown path.
          const onApi = yield* request(server.port, "/metrics", key)
          const unknown = yield* request(server.port, "/no-such-path", key)
          assert.strictEqual(onApi.status, 404)
          assert.deepStrictEqual(onApi, unknown)

          const hook = yield* post(server.port, "/api/v1/hooks", key, { url: `${receiver.url}/down`, events: ["member.created"] })
          assert.strictEqual(hook.status, 201)
          const ids: Array<number> = []
          for (let i = 0; i < 10; i++) {
            const member = yield* post(server.port, "/api/v1/members", key, { name: `Observed ${i}`, status: "active" })
            assert.strictEqual(member.status, 201)
            ids.push(member.body.data.id)
          }
          assert.strictEqual((yield* request(server.port, `/api/v1/members/${ids[3]}`, key)).status, 200)
          assert.strictEqual((yield* request(server.port, `/api/v1/members/${ids[4]}?fields=name`, key)).status, 200)
          let limited = 0
          for (let i = 0; i < 40 && limited === 0; i++) if ((yield* request(server.port, "/api/v1/me", key)).status === 429) limited++
          assert.strictEqual(limited, 1)

          // While the receiver is down, deliveries wait: 4 held by the relay (one subscription's
          // share), the rest due and waiting.
          const down = yield* eventually(scrape(metricsPort), ({ samples }) =>
            valueOf(samples, "chamber_webhook_due_deliveries") >= 6 && valueOf(samples, "chamber_webhook_attempts_total", { outcome: "failed" }) >= 2, "deliveries due while the receiver is down")
          assert.isAbove(valueOf(down.samples, "chamber_webhook_oldest_due_seconds"), 0)

          // The receiver answers again: every delivery goes out and the backlog empties.
          receiver.setDefault(200)
          const up = yield* eventually(scrape(metricsPort), ({ samples }) =>
            valueOf(samples, "chamber_webhook_due_deliveries") === 0 && valueOf(samples, "chamber_webhook_attempts_total", { outcome: "succeeded" }) >= 10, "the backlog empties once the receiver answers")
          const { samples, types } = up
          assert.strictEqual(valueOf(samples, "chamber_webhook_oldest_due_seconds"), 0)

          // Every metric the ruling names, with its type and labels.
          const expected: Record<string, string> = {
            http_server_request_duration_seconds: "histogram",
            chamber_rate_limited_total: "counter",
            chamber_webhook_attempts_total: "counter",
            chamber_webhook_attempt_duration_seconds: "histogram",
            chamber_webhook_delivery_lag_seconds: "histogram",
            chamber_webhook_due_deliveries: "gauge",
            chamber_webhook_oldest_due_seconds: "gauge",
            chamber_webhook_subscriptions: "gauge",
            process_cpu_seconds_total: "counter",
            process_resident_memory_bytes: "gauge",
            nodejs_heap_used_bytes: "gauge",
            nodejs_eventloop_delay_seconds: "gauge"
          }
          for (const [name, type] of Object.entries(expected)) assert.strictEqual(types.get(name), type, name)
          const durations = samples.filter((s) => s.name === "http_server_request_duration_seconds_count")
          for (const s of durations) assert.hasAllKeys(s.labels, ["http_request_method", "http_route", "http_response_status_code"])
          const routes = new Set(durations.map((s) => s.labels.http_route))
          assert.isTrue(routes.has("/api/v1/members/:member"), [...routes].join(" "))
          assert.isTrue(routes.has("/api/v1/members"))
          assert.isTrue(routes.has("/api/v1/me"))
          assert.isTrue(routes.has(""), "an unknown path has the empty route")
          assert.strictEqual(valueOf(samples, "http_server_request_duration_seconds_count", { http_route: "/api/v1/members/:member", http_request_method: "GET", http_response_status_code: "200" }), 2)
          assert.strictEqual(valueOf(samples, "http_server_request_duration_seconds_count", { http_route: "/api/v1/members", http_request_method: "POST", http_response_status_code: "201" }), 10)
          assert.strictEqual(valueOf(samples, "http_server_request_duration_seconds_count", { http_route: "/api/v1/me", http_response_status_code: "429" }), 1)
          assert.strictEqual(valueOf(samples, "chamber_rate_limited_total", { window: "minute" }), 1)
          assert.strictEqual(valueOf(samples, "chamber_rate_limited_total", { window: "day" }), 0)
          for (const outcome of ["succeeded", "failed", "refused", "timeout"]) {
            assert.isTrue(samples.some((s) => s.name === "chamber_webhook_attempts_total" && s.labels.outcome === outcome), outcome)
          }
          assert.isAtLeast(valueOf(samples, "chamber_webhook_attempts_total", { outcome: "timeout" }), 1)
          const attempts = valueOf(samples, "chamber_webhook_attempts_total")
          assert.strictEqual(valueOf(samples, "chamber_webhook_attempt_duration_seconds_count"), attempts)
          assert.isAtLeast(valueOf(samples, "chamber_webhook_delivery_lag_seconds_count"), 10)
          assert.strictEqual(valueOf(samples, "chamber_webhook_subscriptions", { state: "active" }), 1)
          assert.isTrue(samples.some((s) => s.name === "chamber_webhook_subscriptions" && s.labels.state === "inactive"))
          assert.isAbove(valueOf(samples, "process_cpu_seconds_total"), 0)
          assert.isAbove(valueOf(samples, "process_resident_memory_bytes"), 0)

          // The CLI's view of the same backlog.
          assert.deepStrictEqual(json(yield* chamber(["deliveries", "summary", "--json"])), {
            due: 0,
            oldest_due_seconds: 0,
            held: 0,
            active_subscriptions: 1,
            inactive_subscriptions: 0
          })

          // No label names a chamber, a key or a row: no value holds the chamber's id, the key,
          // its prefix, or any of the rows' ids as a path segment.
          for (const s of samples) {
            for (const value of Object.values(s.labels)) {
              assert.notInclude(value, tenant)
              assert.notInclude(value, key.slice(0, 12))
              assert.notMatch(value, /\/\d+(\/|$)/, `${s.name} ${value}`)
            }
          }
        }), 300_000)

      it.effect("OTLP/HTTP protobuf: a request's span with its service and SQL spans and the request id, metrics, the service name and resource attributes; the API keeps answering once the collector is gone", () =>
        Effect.gen(function*() {
          const { collector, key, server } = yield* exporting({
            OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
            OTEL_SERVICE_NAME: "chamber-under-test",
            OTEL_RESOURCE_ATTRIBUTES: "deployment.environment=test,service.namespace=chambers",
            OTEL_BSP_SCHEDULE_DELAY: "200",
            OTEL_METRIC_EXPORT_INTERVAL: "300",
            CHAMBER_RATE_LIMIT_PER_MINUTE: "10000"
          })
          const requestId = `trace-me-${Math.random().toString(36).slice(2)}`
          assert.strictEqual((yield* request(server.port, "/api/v1/members?sort=name", key, { "x-request-id": requestId })).status, 200)

          const spans = yield* eventually(Effect.sync(() => spansOf(collector.got)), (all) => {
            const root = all.find((s) => attr(s.span.attributes, "request_id") === requestId)
            return root !== undefined && all.some((s) => s.span.traceId === root.span.traceId && s.span.name === "Members.list")
          }, "the request's spans reach the collector")
          const root = spans.find((s) => attr(s.span.attributes, "request_id") === requestId)!
          assert.isTrue(collector.got.filter((g) => g.path === "/v1/traces").every((g) => g.contentType === "application/x-protobuf"), "spans sent as protobuf")
          assert.strictEqual(attr(root.resource, "service.name"), "chamber-under-test")
          assert.strictEqual(attr(root.resource, "deployment.environment"), "test")
          assert.strictEqual(attr(root.resource, "service.namespace"), "chambers")
          assert.strictEqual(attr(root.span.attributes, "http.request.method"), "GET")
          assert.strictEqual(attr(root.span.attributes, "http.route"), "/api/v1/members")
          const trace = spans.filter((s) => s.span.traceId === root.span.traceId).map((s) => s.span)
          const byId = new Map(trace.map((s) => [s.spanId, s]))
          const ancestors = (s: OtlpSpan) => {
            const chain: Array<string> = []
            for (let p = s.parentSpanId; p !== undefined && p !== "" && byId.has(p); p = byId.get(p)!.parentSpanId) chain.push(byId.get(p)!.name)
            return chain
          }
          const service = trace.find((s) => s.name === "Members.list")!
          assert.include(ancestors(service).map((n) => n), root.span.name, "the service span is under the request's")
          const sql = trace.filter((s) => attr(s.attributes, "db.query.text") !== undefined && ancestors(s).includes("Members.list"))
          assert.isAbove(sql.length, 0, `SQL spans under the service span: ${trace.map((s) => s.name).join(", ")}`)
          assert.isTrue(sql.some((s) => /members/.test(String(attr(s.attributes, "db.query.text")))))

          const metrics = yield* eventually(
            Effect.sync(() => collector.got.filter((g) => g.path === "/v1/metrics").map(exportOf)),
            (all) => all.some((m) => JSON.stringify(m).includes("http_server_request_duration_seconds")),
            "the metrics reach the collector"
          )
          const exported = metrics.find((m) => JSON.stringify(m).includes("http_server_request_duration_seconds"))
          assert.strictEqual(attr(exported.resourceMetrics[0].resource.attributes, "service.name"), "chamber-under-test")
          assert.include(JSON.stringify(exported), "chamber_webhook_due_deliveries")

          // The collector goes away: every request is still answered, and one warning says so.
          yield* Effect.promise(collector.close)
          for (let i = 0; i < 30; i++) {
            assert.strictEqual((yield* request(server.port, "/api/v1/members", key)).status, 200)
            yield* pause(50)
          }
          yield* Effect.promise(() => server.waitFor(/OTLP collector at \S+ does not answer/))
          for (let i = 0; i < 10; i++) assert.strictEqual((yield* request(server.port, "/api/v1/me", key)).status, 200)
          assert.lengthOf((server.stdout() + server.stderr()).match(/does not answer; spans and metrics are dropped/g) ?? [], 1)
        }), 300_000)

      it.effect("no key or webhook secret leaves in a span: sent in a query, a path or a body, succeeding or failing; url.* shows [redacted] where the access log does", () =>
        Effect.gen(function*() {
          if (rt.name !== "pglite") return
          const other = `cck_${"Q1w2E3r4T5".repeat(4)}`
          const run = Math.random().toString(36).slice(2)
          // One server at a time: the embedded database has one.
          yield* Effect.scoped(Effect.gen(function*() {
            const { collector, key, server } = yield* exporting({ OTEL_BSP_SCHEDULE_DELAY: "100", LOG_FORMAT: "json", CHAMBER_RATE_LIMIT_PER_MINUTE: "10000" })
            const sent = leakingRequests(key, other)
            const statuses: Array<number> = []
            for (const [i, r] of sent.entries()) statuses.push(yield* send(server.port, key, r, `leak-${run}-${i}`))
            // Failing requests among them: the spans' exceptions are covered.
            assert.isTrue(statuses.some((status) => status >= 400), statuses.join(" "))
            const mine = (all: ReturnType<typeof spansOf>) => all.filter((s) => String(attr(s.span.attributes, "request_id") ?? "").startsWith(`leak-${run}-`))
            yield* eventually(Effect.sync(() => mine(spansOf(collector.got)).length), (n) => n === sent.length, "every request's span exported")
            yield* pause(300)
            const exported = collector.got.filter((g) => g.path === "/v1/traces").map((g) => g.body.toString("utf8")).join("\n")
            assertNoSecret(exported, key, other)
            assert.include(exported, "[redacted]")
            // Every attribute and event a span carries is one docs/operations.md lists.
            const documented = documentedSpanAttributes()
            for (const { span } of spansOf(collector.got)) {
              const full = span as OtlpSpan & { events: Array<{ name: string; attributes: Array<{ key: string }> }> }
              for (const a of full.attributes) assert.include(documented, a.key, `${span.name}: ${a.key} is not in docs/operations.md "Span attributes"`)
              for (const e of full.events) {
                assert.include(documented, e.name, `${span.name}: event ${e.name}`)
                for (const a of e.attributes) assert.include(documented, a.key, `${span.name}: event ${e.name}: ${a.key}`)
              }
            }
            // Failures are exported with what they said, redacted.
            assert.include(exported, "exception.message")
            // Each request span's URL as its access-log line shows it.
            const log = server.stdout().split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l))
            for (const { span } of mine(spansOf(collector.got))) {
              const id = attr(span.attributes, "request_id")
              const line = log.find((l) => l.message === "request" && l.annotations.request_id === id)
              assert.isDefined(line, `the access line of ${id}`)
              const query = attr(span.attributes, "url.query")
              const path = `${attr(span.attributes, "url.path")}${query === undefined ? "" : `?${query}`}`
              assert.strictEqual(path, line.annotations.path, String(id))
              assert.strictEqual(attr(span.attributes, "url.full"), `http://127.0.0.1:${server.port}${line.annotations.path}`)
            }
            assertNoSecret(server.stdout() + server.stderr(), key, other)
          }))

          // Protobuf carries none either.
          const proto = yield* exporting({ OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf", OTEL_BSP_SCHEDULE_DELAY: "100", CHAMBER_RATE_LIMIT_PER_MINUTE: "10000" })
          const sent = leakingRequests(proto.key, other)
          for (const [i, r] of sent.entries()) yield* send(proto.server.port, proto.key, r, `proto-${run}-${i}`)
          const traces = () => Buffer.concat(proto.collector.got.filter((g) => g.path === "/v1/traces").map((g) => g.body))
          yield* eventually(Effect.sync(() => traces().includes(`proto-${run}-${sent.length - 1}`)), (found) => found, "the protobuf spans exported")
          yield* pause(300)
          assertNoSecret(traces().toString("latin1"), proto.key, other)
        }), 240_000)

      it.effect("OTEL_TRACES_SAMPLER_ARG=0 traces no request, while the metrics are still exported, as protobuf by default, for service chamber", () =>
        Effect.gen(function*() {
          if (rt.name !== "pglite") return
          const { collector, key, server } = yield* exporting({
            OTEL_EXPORTER_OTLP_PROTOCOL: "",
            OTEL_TRACES_SAMPLER_ARG: "0",
            OTEL_BSP_SCHEDULE_DELAY: "100",
            OTEL_METRIC_EXPORT_INTERVAL: "300"
          })
          for (let i = 0; i < 5; i++) assert.strictEqual((yield* request(server.port, "/api/v1/me", key)).status, 200)
          // Two metric exports after the requests: spans, had there been any, were due long before.
          const exports = () => collector.got.filter((g) => g.path === "/v1/metrics")
          const before = exports().length
          yield* eventually(Effect.sync(() => exports().length), (n) => n >= before + 2, "metrics exported")
          yield* pause(300)
          assert.deepStrictEqual(collector.got.filter((g) => g.path === "/v1/traces"), [], "no span exported")
          const last = exports().at(-1)!
          assert.strictEqual(last.contentType, "application/x-protobuf")
          // Protobuf keeps strings as their UTF-8 bytes: the metric's name and the service's are there as written.
          assert.isTrue(last.body.includes("http_server_request_duration_seconds"))
          assert.isTrue(last.body.includes("service.name"))
          // An AnyValue's string_value is field 1, length-delimited: 0x0a, its length, its bytes.
          assert.isTrue(last.body.includes(Buffer.concat([Buffer.from([0x0a, 7]), Buffer.from("chamber")])), "service.name defaults to chamber")
        }), 120_000)

      it.effect("OTEL_TRACES_SAMPLER_ARG=0.5: each request traced whole (its service and SQL spans under it) or not at all; a traceparent's choice followed", () =>
        Effect.gen(function*() {
          if (rt.name !== "pglite") return
          const { collector, key, server } = yield* exporting({ OTEL_TRACES_SAMPLER_ARG: "0.5", OTEL_BSP_SCHEDULE_DELAY: "100" })
          const run = Math.random().toString(36).slice(2)
          const ids = Array.from({ length: 60 }, (_, i) => `sampled-${run}-${i}`)
          for (const id of ids) assert.strictEqual((yield* request(server.port, "/api/v1/me", key, { "x-request-id": id })).status, 200)
          // A W3C parent's choice, whatever the ratio: sampled (01) is traced in its trace, not sampled (00) is not.
          const [traced, untraced] = ["4bf92f3577b34da6a3ce929d0e0e4736", "5cf92f3577b34da6a3ce929d0e0e4737"]
          for (const [trace, flags] of [[traced, "01"], [untraced, "00"]]) {
            for (let i = 0; i < 5; i++) {
              const headers = { traceparent: `00-${trace}-00f067aa0ba902b7-${flags}`, "x-request-id": `parent-${run}-${flags}-${i}` }
              assert.strictEqual((yield* request(server.port, "/api/v1/me", key, headers)).status, 200)
            }
          }
          const requestSpans = (all: ReturnType<typeof spansOf>) => all.filter((s) => String(attr(s.span.attributes, "request_id") ?? "").includes(run))
          yield* eventually(Effect.sync(() => requestSpans(spansOf(collector.got)).filter((s) => s.span.traceId === traced).length), (n) => n === 5, "the sampled parent's requests traced")
          yield* pause(300)
          const all = spansOf(collector.got).map((s) => s.span)
          const requests = requestSpans(spansOf(collector.got)).map((s) => s.span)
          const chosen = requests.filter((s) => ids.includes(String(attr(s.attributes, "request_id"))))
          // 60 requests at 0.5: 30 expected; fewer than 15 or more than 45 has odds of about 1 in 10,000.
          assert.isAtLeast(chosen.length, 15, `${chosen.length} of 60 requests traced at 0.5`)
          assert.isAtMost(chosen.length, 45, `${chosen.length} of 60 requests traced at 0.5`)
          assert.isFalse(all.some((s) => s.traceId === untraced), "a parent that is not sampled: its requests not traced")
          // Every request traced has its service and SQL spans.
          const requestOf = new Map(requests.map((r) => [r.traceId, r]))
          for (const r of requests) {
            const trace = all.filter((s) => s.traceId === r.traceId)
            assert.isTrue(trace.some((s) => s.name === "Keys.authenticate" && s.parentSpanId === r.spanId), "the service span under the request's")
            assert.isTrue(trace.some((s) => attr(s.attributes, "db.query.text") !== undefined), "its statements")
          }
          // A request left out makes no span: no key check is traced outside a traced request.
          const checks = all.filter((s) => s.name === "Keys.authenticate")
          assert.deepStrictEqual(checks.filter((s) => !requestOf.has(s.traceId)).length, 0, "no key check outside a traced request")
          assert.strictEqual(checks.length, requests.length, "one key check a traced request")
        }), 120_000)

      it.effect("/metrics stays bounded after every method Node accepts on every route and unknown paths: standard methods or _OTHER, one route label for 404 and 405; CHAMBER_METRICS_HOST moves the listener", () =>
        Effect.gen(function*() {
          if (rt.name !== "pglite") return
          const { key } = yield* chamberWithKey
          const metricsPort = yield* freePort()
          const server = yield* serving(["--no-relay"], { CHAMBER_METRICS_PORT: String(metricsPort), CHAMBER_METRICS_HOST: "0.0.0.0", CHAMBER_RATE_LIMIT_PER_MINUTE: "1000000" })
          yield* Effect.promise(() => server.waitFor(new RegExp(`Metrics on http://0\\.0\\.0\\.0:${metricsPort}/metrics`)))
          // Bound to every address as asked: reachable on another loopback address than 127.0.0.1.
          assert.strictEqual((yield* Effect.promise(() => fetch(`http://127.0.0.2:${metricsPort}/metrics`))).status, 200)
          // /metrics alone, for GET and HEAD; one render answers the scrapes of the second after it.
          const other = yield* Effect.promise(() => fetch(`http://127.0.0.1:${metricsPort}/other`))
          assert.strictEqual(other.status, 404)
          const posted = yield* Effect.promise(() => fetch(`http://127.0.0.1:${metricsPort}/metrics`, { method: "POST" }))
          assert.deepStrictEqual([posted.status, posted.headers.get("allow")], [405, "GET, HEAD"])
          assert.strictEqual((yield* Effect.promise(() => fetch(`http://127.0.0.1:${metricsPort}/metrics`, { method: "HEAD" }))).status, 200)
          const renders = yield* Effect.promise(() => Promise.all([0, 1].map(() => fetch(`http://127.0.0.1:${metricsPort}/metrics`).then((r) => r.text()))))
          assert.strictEqual(renders[0], renders[1], "scrapes within a second share one render")

          // The routes and their methods, from the contract; the paths served beside it.
          const openapi = (yield* Effect.promise(() => fetch(`http://127.0.0.1:${server.port}/api/v1/openapi.json`).then((r) => r.json()))) as {
            paths: Record<string, Record<string, unknown>>
          }
          const served = new Map<string, Set<string>>(["/healthz", "/readyz", "/docs", "/api/v1/openapi.json"].map((p) => [p, new Set(["GET", "HEAD"])]))
          for (const [path, operations] of Object.entries(openapi.paths)) {
            const methods = new Set(Object.keys(operations).map((m) => m.toUpperCase()).filter((m) => STANDARD_METHODS.includes(m)))
            if (methods.has("GET")) methods.add("HEAD")
            served.set(path.replace(/\{([^}]+)\}/g, ":$1"), methods)
          }
          const paths = [...served.keys()].map((template) => template.replace(/:[^/]+/g, "1"))
          paths.push("/", "/nope", "/api/v1/nope", "/api/v1/members/1/nope/2", "/api/v1/members/%2e%2e", "/api/v2/members")
          const requests = paths.flatMap((path) => METHODS.map((method) => ({ method, path })))
          const results = yield* Effect.promise(() => inTurns(requests, 6, (r) => rawRequest(server.port, r.method, r.path, key)))
          const answered = results.filter((r) => r.answered).length
          assert.isAbove(answered, requests.length / 2, "most requests answered by the API")

          const durations = (samples: ReadonlyArray<Sample>) => samples.filter((s) => s.name === "http_server_request_duration_seconds_count")
          const { samples } = yield* eventually(scrape(metricsPort), ({ samples }) =>
            durations(samples).reduce((n, s) => n + s.value, 0) >= answered, "every answered request counted")
          const series = durations(samples)
          const statuses = new Set(series.map((s) => s.labels.http_response_status_code))
          for (const s of series) {
            const { http_request_method: method, http_route: route } = s.labels
            assert.include([...STANDARD_METHODS, "_OTHER"], method, JSON.stringify(s.labels))
            if (route !== "") assert.isTrue(served.get(route!)?.has(method!), `a route's series only for the methods it serves: ${JSON.stringify(s.labels)}`)
          }
          assert.isTrue(series.some((s) => s.labels.http_request_method === "_OTHER"), "methods outside the standard set are _OTHER")
          for (const status of ["404", "405"]) {
            assert.isTrue(series.some((s) => s.labels.http_route === "" && s.labels.http_response_status_code === status), `${status} under the unmatched route`)
          }
          assert.isFalse(series.some((s) => s.labels.http_route !== "" && s.labels.http_response_status_code === "405"), "a method its route does not serve is unmatched")
          // The bound: each route with the methods it serves, and the unmatched route with every
          // label a method can have, each with a status the server answered.
          const routeMethods = [...served.values()].reduce((n, methods) => n + methods.size, 0)
          const bound = (routeMethods + STANDARD_METHODS.length + 1) * statuses.size
          assert.isAtMost(series.length, bound, `${series.length} series for ${requests.length} requests`)
          assert.isAtMost(series.length, (served.size + 1) * (STANDARD_METHODS.length + 1) * statuses.size)
          // Sent again, every request lands in a series that exists: the count does not move.
          yield* Effect.promise(() => inTurns(requests, 6, (r) => rawRequest(server.port, r.method, r.path.replace(/\/1(?=\/|$)/g, "/2"), key)))
          yield* pause(1100)
          const again = durations((yield* scrape(metricsPort)).samples)
          assert.strictEqual(again.length, series.length, "no new series from the same requests on other rows")
        }), 300_000)

      it.effect("chamber relay serves its own metrics on CHAMBER_METRICS_PORT, on 127.0.0.1 whatever HOST says", () =>
        Effect.gen(function*() {
          if (rt.name !== "postgres") return
          const base = yield* Env
          const metricsPort = yield* freePort()
          const relay = yield* Effect.acquireRelease(
            Effect.sync(() => spawn(process.execPath, [BIN, "relay"], { env: { ...process.env, ...base, REDIS_URL: "", NO_COLOR: "1", CHAMBER_METRICS_PORT: String(metricsPort), HOST: "0.0.0.0" } })),
            (c) => Effect.promise(() => new Promise<void>((resolve) => {
              if (c.exitCode !== null) return resolve()
              c.on("close", () => resolve())
              c.kill("SIGTERM")
            }))
          )
          let out = ""
          relay.stdout.on("data", (d) => (out += d))
          relay.stderr.on("data", (d) => (out += d))
          for (let i = 0; i < 600 && !out.includes(`:${metricsPort}/metrics`); i++) yield* pause(100)
          // On 127.0.0.1 whatever HOST says, until CHAMBER_METRICS_HOST says otherwise: not on another loopback address.
          assert.include(out, `Metrics on http://127.0.0.1:${metricsPort}/metrics`)
          const elsewhere = yield* Effect.promise(() => fetch(`http://127.0.0.2:${metricsPort}/metrics`).then(() => "answered", () => "refused"))
          assert.strictEqual(elsewhere, "refused")
          const { samples, types } = yield* scrape(metricsPort)
          assert.strictEqual(types.get("chamber_webhook_attempts_total"), "counter")
          assert.isTrue(samples.some((s) => s.name === "chamber_webhook_due_deliveries"))
          assert.isFalse(samples.some((s) => s.name.startsWith("http_server_request_duration_seconds")), "a relay answers no requests")
        }), 120_000)
    })
  })
}

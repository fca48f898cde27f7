/**
 * Spans leave the process with the access log's rule applied (core's Redaction.ts,
 * docs/operations.md "What telemetry never carries"): every span's name, attributes (`url.full`,
 * `url.query`, `url.path`, `user_agent.original`, `db.query.text`...), events (`exception.message`
 * and `exception.stacktrace` among them), links and status message, and the resource's
 * attributes, as they are exported, whatever set them (Effect's HTTP server, the router, a
 * service, a failure). A span holding nothing to redact is exported as it was made.
 */
import type { AnyValue, KeyValue } from "effect/observability/OtlpResource"
import type { TraceData } from "effect/observability/OtlpTracer"
import { redactSecrets } from "@chamber/core"

type ResourceSpan = TraceData["resourceSpans"][number]
type ScopeSpan = ResourceSpan["scopeSpans"][number]
type Span = ScopeSpan["spans"][number]

/** `items` with `f` applied, the same array when `f` changed none of them. */
const mapped = <A>(items: Array<A>, f: (a: A) => A): Array<A> => {
  let out = items
  for (let i = 0; i < items.length; i++) {
    const next = f(items[i]!)
    if (next === items[i]) continue
    if (out === items) out = items.slice()
    out[i] = next
  }
  return out
}

const value = (v: AnyValue): AnyValue => {
  if (typeof v.stringValue === "string") {
    const text = redactSecrets(v.stringValue)
    return text === v.stringValue ? v : { stringValue: text }
  }
  if (v.arrayValue !== undefined) {
    const values = mapped(v.arrayValue.values, value)
    return values === v.arrayValue.values ? v : { arrayValue: { values } }
  }
  if (v.kvlistValue !== undefined) {
    const values = keyValues(v.kvlistValue.values)
    return values === v.kvlistValue.values ? v : { kvlistValue: { values } }
  }
  return v
}

const keyValue = (kv: KeyValue): KeyValue => {
  const next = value(kv.value)
  return next === kv.value ? kv : { key: kv.key, value: next }
}

const keyValues = (kvs: Array<KeyValue>): Array<KeyValue> => mapped(kvs, keyValue)

const withAttributes = <T extends { readonly attributes: Array<KeyValue> }>(item: T): T => {
  const attributes = keyValues(item.attributes)
  return attributes === item.attributes ? item : { ...item, attributes }
}

const span = (s: Span): Span => {
  const name = redactSecrets(s.name)
  const attributes = keyValues(s.attributes)
  const events = mapped(s.events, (e) => {
    const eventName = redactSecrets(e.name)
    const redacted = withAttributes(e)
    return eventName === e.name ? redacted : { ...redacted, name: eventName }
  })
  const links = mapped(s.links, withAttributes)
  const message = s.status.message === undefined ? undefined : redactSecrets(s.status.message)
  const status = message === s.status.message ? s.status : { ...s.status, message }
  return name === s.name && attributes === s.attributes && events === s.events && links === s.links && status === s.status
    ? s
    : { ...s, name, attributes, events, links, status }
}

/** The export with every text of its spans and resources under the redaction rule. */
export const redactTraces = (data: TraceData): TraceData => {
  const resourceSpans = mapped(data.resourceSpans, (rs) => {
    const attributes = keyValues(rs.resource.attributes)
    const scopeSpans = mapped(rs.scopeSpans, (ss) => {
      const spans = mapped(ss.spans, span)
      return spans === ss.spans ? ss : { ...ss, spans }
    })
    return attributes === rs.resource.attributes && scopeSpans === rs.scopeSpans
      ? rs
      : { ...rs, resource: { ...rs.resource, attributes }, scopeSpans }
  })
  return resourceSpans === data.resourceSpans ? data : { resourceSpans }
}

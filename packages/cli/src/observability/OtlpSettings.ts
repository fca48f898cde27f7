/**
 * The OTEL_* variables `chamber serve` and `chamber relay` honour (docs/operations.md "Traces"),
 * read apart from the exporters (OtlpExport.ts), which are loaded only when an endpoint is set.
 */
export interface OtlpSettings {
  readonly endpoint: string
  readonly serviceName: string
  readonly protocol: "http/protobuf" | "http/json"
  readonly headers: Record<string, string>
  /** The share of requests (root spans) traced, from 0 to 1; their children follow them. */
  readonly ratio: number
  readonly metricsIntervalMs: number
  readonly tracesIntervalMs: number
  readonly maxBatchSize: number
}

export class OtlpConfigError extends Error {}

const millis = (env: Readonly<Record<string, string | undefined>>, name: string, fallback: number) => {
  const text = env[name]?.trim()
  if (text === undefined || text === "") return fallback
  const n = Number(text)
  if (!Number.isInteger(n) || n <= 0) throw new OtlpConfigError(`${name} must be a whole number of milliseconds above 0, not "${text}".`)
  return n
}

/** `k=v,k2=v2`, each part percent-decoded (the OTel format of OTEL_EXPORTER_OTLP_HEADERS). */
const pairs = (text: string | undefined): Record<string, string> => {
  const out: Record<string, string> = {}
  for (const part of (text ?? "").split(",")) {
    const eq = part.indexOf("=")
    if (eq <= 0) continue
    out[decodeURIComponent(part.slice(0, eq).trim())] = decodeURIComponent(part.slice(eq + 1).trim())
  }
  return out
}

/** The settings, or undefined when OTEL_EXPORTER_OTLP_ENDPOINT is unset or empty; throws an error naming a bad variable. */
export const otlpSettingsFromEnv = (env: Readonly<Record<string, string | undefined>> = process.env): OtlpSettings | undefined => {
  const endpoint = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim()
  if (endpoint === undefined || endpoint === "") return undefined
  let url: URL
  try {
    url = new URL(endpoint)
  } catch {
    throw new OtlpConfigError(`OTEL_EXPORTER_OTLP_ENDPOINT must be an http or https URL, not "${endpoint}".`)
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new OtlpConfigError(`OTEL_EXPORTER_OTLP_ENDPOINT must be an http or https URL, not "${endpoint}".`)
  }
  const protocol = env.OTEL_EXPORTER_OTLP_PROTOCOL?.trim() || "http/protobuf"
  if (protocol !== "http/protobuf" && protocol !== "http/json") {
    throw new OtlpConfigError(`OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf or http/json, not "${protocol}".`)
  }
  const ratioText = env.OTEL_TRACES_SAMPLER_ARG?.trim()
  const ratio = ratioText === undefined || ratioText === "" ? 1 : Number(ratioText)
  if (!(ratio >= 0 && ratio <= 1)) throw new OtlpConfigError(`OTEL_TRACES_SAMPLER_ARG must be a ratio from 0 to 1, not "${ratioText}".`)
  return {
    endpoint: endpoint.replace(/\/+$/, ""),
    serviceName: env.OTEL_SERVICE_NAME?.trim() || pairs(env.OTEL_RESOURCE_ATTRIBUTES)["service.name"] || "chamber",
    protocol,
    headers: pairs(env.OTEL_EXPORTER_OTLP_HEADERS),
    ratio,
    metricsIntervalMs: millis(env, "OTEL_METRIC_EXPORT_INTERVAL", 60_000),
    tracesIntervalMs: millis(env, "OTEL_BSP_SCHEDULE_DELAY", 5_000),
    maxBatchSize: millis(env, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512)
  }
}

/**
 * Traces are sampled a request at a time (docs/operations.md "Traces"): a request that the server
 * opened no span for, because a sampler left it out (HttpMiddleware's `TracerDisabledWhen`, which
 * `chamber serve` sets when OTEL_TRACES_SAMPLER_ARG is below 1), makes no span at all. Its service
 * calls and statements would otherwise each start a trace of their own, and an unsampled request
 * would still pay for making every one of its spans.
 */
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Tracer from "effect/Tracer"

export const untracedWithoutItsSpan = <A, E, R>(request: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiber((fiber) =>
    Context.getOrUndefined(fiber.context, Tracer.ParentSpan) === undefined ? Effect.withTracerEnabled(request, false) : request
  )

/**
 * Service methods as spans (docs/architecture.md "Spans"): with tracing on, a method's call is a
 * span named for it, inside the caller's; with tracing off (the HTTP server without a tracer) it
 * makes none, and answers the same.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Option from "effect/Option"
import * as References from "effect/References"
import { traced } from "../src/index.ts"

/** The name of the span the method runs in, and its parent's. */
const get = traced("Members.get")(function*(id: number) {
  const span = yield* Effect.option(Effect.currentSpan)
  const parent = Option.flatMap(span, (s) => s.parent)
  return {
    id,
    span: Option.getOrUndefined(Option.map(span, (s) => s.name)),
    parent: Option.getOrUndefined(Option.map(parent, (p) => (p._tag === "Span" ? p.name : undefined)))
  }
})

describe("traced", () => {
  it.effect("with tracing on, a call is a span named for the method, inside the caller's span", () =>
    Effect.gen(function*() {
      const answer = yield* get(7).pipe(Effect.withSpan("GET /api/v1/members/7"))
      assert.deepStrictEqual(answer, { id: 7, span: "Members.get", parent: "GET /api/v1/members/7" })
    }))

  it.effect("with tracing off, a call makes no span and answers the same", () =>
    Effect.gen(function*() {
      const answer = yield* get(7).pipe(Effect.provideService(References.TracerEnabled, false))
      assert.deepStrictEqual(answer, { id: 7, span: undefined, parent: undefined })
    }))
})

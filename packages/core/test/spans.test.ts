/**
 * Every core service method is a span named for it (docs/architecture.md "Spans"): the test walks
 * every service the core exports (a Context key with a `layer`), builds it over ports that answer
 * nothing, calls each of its methods (or runs it, where the method is an effect) under a tracer
 * that records span names, and expects a span `<Service>.<method>` for every one. A method written as a plain function or with
 * `Effect.fnUntraced` makes none and fails the test.
 */
import { assert, describe, it } from "@effect/vitest"
import * as Context from "effect/Context"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as Tracer from "effect/Tracer"
import * as Core from "../src/index.ts"

type Service = Context.Key<unknown, Record<string, unknown>> & { readonly key: string; readonly layer: Layer.Layer<unknown, unknown, unknown> }

const services: ReadonlyArray<[string, Service]> = Object.entries(Core).flatMap(([name, value]) =>
  Context.isKey(value) && Layer.isLayer((value as { layer?: unknown }).layer) ? [[name, value as unknown as Service]] : []
)

/**
 * A port or service whose every member is a defect, whether called (a method) or run (a member that
 * is an effect): enough to build a layer and enter a method.
 */
const answersNothing = (key: string): unknown =>
  new Proxy({}, {
    get: (_, property) => {
      if (property === "then") return undefined
      const defect = Effect.die(`${key}.${String(property)} is not here`)
      return new Proxy(() => defect, {
        get: (_, p) => Reflect.get(defect, p, defect),
        has: (_, p) => p in defect
      })
    }
  })

/** Every key the core exports, each answering nothing: what any service's layer may ask for. */
const ports = Context.makeUnsafe<never>(
  new Map(Object.values(Core).flatMap((value) => (Context.isKey(value) ? [[(value as { key: string }).key, answersNothing((value as { key: string }).key)]] : [])))
)

const recording = (names: Array<string>) =>
  Tracer.make({
    span(options) {
      names.push(options.name)
      return Tracer.nativeTracer.span(options)
    }
  })

describe("spans", () => {
  it("finds the core's services", () => {
    const names = services.map(([name]) => name)
    for (const expected of ["Members", "Invoices", "Payments", "Keys", "Hooks", "Tenants", "Importer"]) {
      assert.include(names, expected)
    }
  })

  for (const [name, service] of services) {
    it.effect(`every method of ${name} is a span named ${name}.<method>`, () =>
      Effect.gen(function*() {
        const built = yield* Layer.build(service.layer as Layer.Layer<unknown>).pipe(Effect.scoped, Effect.provideContext(ports))
        const methods = Object.entries(Context.get(built as Context.Context<unknown>, service)).filter(([, v]) => typeof v === "function" || Effect.isEffect(v))
        assert.isAbove(methods.length, 0)
        const missing: Array<string> = []
        for (const [method, fn] of methods) {
          const names: Array<string> = []
          const call = Effect.isEffect(fn) ? (fn as Effect.Effect<unknown, unknown>) : Effect.suspend(() => (fn as (...args: Array<unknown>) => Effect.Effect<unknown, unknown>)(1, {}, {}, {}))
          yield* call.pipe(
            Effect.catchCause(() => Effect.void),
            Effect.withTracer(recording(names))
          )
          if (!names.includes(`${name}.${method}`)) missing.push(`${name}.${method} (spans: ${names.join(", ") || "none"})`)
        }
        assert.deepStrictEqual(missing, [])
      }))
  }
})

/**
 * A service method as a span: `traced("Members.get")(function*(...) {...})` is
 * `Effect.fn("Members.get")(...)` whenever tracing is on, and costs what `Effect.fnUntraced`
 * costs when it is off. `Effect.fn` makes a no-op span and records its call site even with
 * tracing off, some 3 µs a call against 0.2 (docs/architecture.md "Spans"); the HTTP server turns
 * tracing off unless a tracer is installed.
 */
import * as Effect from "effect/Effect"
import * as References from "effect/References"

type Untraced = typeof Effect.fnUntraced

export const traced = (name: string): Untraced =>
  ((body: (...args: Array<any>) => any, ...pipeables: Array<any>) => {
    const withSpan = (Effect.fn(name) as (...a: Array<unknown>) => (...args: Array<unknown>) => Effect.Effect<unknown>)(body, ...pipeables)
    const withoutSpan = (Effect.fnUntraced as (...a: Array<unknown>) => (...args: Array<unknown>) => Effect.Effect<unknown>)(body, ...pipeables)
    return function(this: unknown, ...args: Array<unknown>) {
      return Effect.withFiber((fiber) => (fiber.getRef(References.TracerEnabled) ? withSpan : withoutSpan).apply(this, args))
    }
  }) as Untraced

/**
 * A relay in a process of its own, for tests that kill one (relay.test.ts): RelayLive on the
 * PostgreSQL database at RELAY_DATABASE_URL, trusting the receiver certificate in RELAY_CA (PEM),
 * loopback destinations allowed, 2 s attempts, 100 ms polls. Prints RELAY_READY once running.
 */
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import { AllowPrivateDestinations } from "@chamber/core"
import { DeliveryStoreSql, StorageLive } from "@chamber/pg-adapter"
import { RelayLive } from "../src/index.ts"

const settings = { retryDelaysMs: [100, 100, 100], timeoutMs: 2_000, allowPrivate: true, retentionMs: 86_400_000 }

const app = Layer.mergeAll(
  RelayLive({ settings, listen: true, ca: process.env.RELAY_CA ?? "", pollMs: 100 }).pipe(Layer.provide(DeliveryStoreSql)),
  Layer.effectDiscard(Effect.sync(() => console.log("RELAY_READY")))
).pipe(
  Layer.provide(StorageLive({ _tag: "Postgres", url: process.env.RELAY_DATABASE_URL ?? "", maxConnections: 4 })),
  Layer.provide(Layer.succeed(AllowPrivateDestinations)(true))
)

Effect.runFork(Layer.launch(app))

/**
 * Text from outside is inert in the terminal (docs/cli.md "Text from outside", docs/admin.md): a
 * receiver of this test's own answers 500 with OSC 52 (clipboard), OSC 8 (link), OSC 0 (title),
 * C1 CSI and OSC, BEL and DEL in its body, a real relay records the attempts, and an API client
 * names a member with the same. Then the admin TUI's attempts view (AdminDataLive over the
 * database, drawn by ink) and the `chamber` command's text output hold no ESC but their own
 * colours, no C1 and no BEL, while showing the text with visible stand-ins; --json stays exact
 * JSON that decodes to the very bytes the receiver sent. An import file's ref in an error, too.
 * On PostgreSQL (the rendering is the same on either storage).
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import * as Layer from "effect/Layer"
import * as SqlClient from "effect/sql/SqlClient"
import { mkdtempSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { AllowPrivateDestinations, Hooks, Members, Tenants } from "@chamber/core"
import { type DatabaseConfig, DeliveryStoreSql, StorageLive } from "@chamber/pg-adapter"
import { DatabaseConfigRef, postgresOnly } from "@chamber/pg-adapter/testing"
import { RelayLive } from "@chamber/webhook-relay"
import { startReceiver } from "@chamber/webhook-relay/test/receiver"
import { adminDataLive } from "../src/tui/AdminDataLive.ts"
import { chamber, Env, type Result } from "./harness.ts"
import { suiteDir } from "./tempDirs.ts"
import { KEY, mount } from "./tui/screen.ts"

/** What a hostile receiver answers: every kind of sequence that acts on a terminal. */
const HOSTILE_BODY = "boom \x1b]52;c;cHduZWQ=\x07 \x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\ \x1b]0;owned\x07 \u009b2J \u009d0;c1\u009c \x7f\x1b[6n end"
/** A member's name as an API client wrote it. */
const HOSTILE_NAME = "Acme \x1b]0;pwned\x07 \u009b31m Ltd"

/** No ESC (but SGR colours, which the TUI draws itself), no C1, no BEL, no DEL. */
const assertInert = (text: string, what: string) => {
  const stripped = text.replace(/\x1b\[[0-9;]*m/g, "")
  assert.notMatch(stripped, /\x1b/, `${what} holds an ESC that is not a colour`)
  assert.notMatch(text, /[\u0080-\u009f]/, `${what} holds a C1 control`)
  assert.notMatch(text, /[\x07\x7f]/, `${what} holds BEL or DEL`)
}

const dir = suiteDir("inert")

const configOf = (config: DatabaseConfig): DatabaseConfig =>
  config._tag === "Embedded" ? { _tag: "Embedded", dataDir: join(mkdtempSync(join(dir, "run-")), "data") } : config

/** The `chamber` command's environment on that database (REDIS_URL unset by the harness). */
const envOf = (config: DatabaseConfig): Record<string, string> =>
  config._tag === "Embedded" ? { CHAMBER_DATA_DIR: config.dataDir ?? "", DATABASE_URL: "" } : { DATABASE_URL: config.url }

const ok = (r: Result) => {
  assert.strictEqual(r.code, 0, `exit ${r.code}: ${r.stderr}`)
  return r.stdout
}

// PostgreSQL only: every `chamber` command on the embedded database opens it afresh, too slow for a test of rendering.
for (const rt of postgresOnly("text from outside")) {
  describe(`text from outside on ${rt.name}`, () => {
    layer(rt.database, { timeout: 180_000, excludeTestServices: true })((it) => {
      it.effect("a receiver's escape sequences reach no TUI frame and no line of the chamber command; JSON keeps them exactly", () =>
        Effect.gen(function*() {
          const receiver = yield* Effect.acquireRelease(
            Effect.promise(() => startReceiver({ defaultReply: { status: 500, body: HOSTILE_BODY } })),
            (r) => Effect.promise(() => r.close())
          )
          const config = configOf(yield* DatabaseConfigRef)

          // A subscription to that receiver, a member named by an API client, and a relay trying 4 times.
          const seeded = yield* Effect.scoped(Effect.gen(function*() {
            const tenant = yield* (yield* Tenants).create({ name: "Inert Chamber" })
            const hook = yield* (yield* Hooks).create(tenant.id, { url: `${receiver.url}/inert`, events: ["member.created"] }).pipe(
              Effect.provideService(AllowPrivateDestinations, true)
            )
            yield* (yield* Members).create(tenant.id, { name: HOSTILE_NAME, status: "active" })
            const settings = { retryDelaysMs: [50, 50, 50], timeoutMs: 5_000, allowPrivate: true, retentionMs: 86_400_000 }
            yield* Layer.build(RelayLive({ settings, listen: false, ca: receiver.ca, pollMs: 50 }).pipe(Layer.provide(DeliveryStoreSql)))
            const sql = yield* SqlClient.SqlClient
            for (let i = 0; i < 300; i++) {
              const [row] = yield* sql<{ status: string }>`SELECT status FROM webhook_deliveries WHERE tenant_id = ${tenant.id}`
              if (row?.status === "failed") break
              yield* Effect.sleep(100)
            }
            return { tenant: tenant.public_id, hook: hook.id }
          }).pipe(Effect.provide(StorageLive(config))))
          assert.lengthOf(receiver.requests, 4)

          // The TUI's Deliveries screen and the delivery's attempts, everything ink wrote kept.
          const data = adminDataLive(config, { perMinute: 120, redisUrl: undefined })
          yield* Effect.promise(async () => {
            const s = mount(data, { tenant: seeded.tenant, now: Date.now, width: 200, height: 30 })
            try {
              await s.press("3")
              await s.until(/› +\d+ #\d+ +member\.created +failed +4 500/, 20_000)
              await s.press(KEY.enter)
              const frame = await s.until(/# +when +status +latency +response[\s\S]*4 +\S+ ago +500 /, 20_000)
              // The body is there, each control a visible character in its place.
              assert.include(frame, "boom ␛]52;c;cHduZWQ=␇ ␛]8;;https://evil.example/␛\\click␛]8;;␛\\ ␛]0;owned␇ \ufffd2J \ufffd0;c1\ufffd ␡␛[6n end")
              assertInert(s.output(), "the TUI's output")
            } finally {
              s.unmount()
            }
          }).pipe(Effect.ensuring(Effect.promise(() => data.close())))

          yield* Effect.gen(function*() {
            // --json: exact JSON (C1 and DEL as \u escapes), decoding to what the receiver and the client sent.
            const listed = ok(yield* chamber(["deliveries", "list", "--tenant", seeded.tenant, "--json"]))
            assertInert(listed, "deliveries list --json")
            assert.include(listed, "\\u001b]52;c;")
            assert.include(listed, "\\u009b2J")
            const deliveries = JSON.parse(listed)
            assert.deepStrictEqual(deliveries[0].attempts.map((a: { response_excerpt: string }) => a.response_excerpt), Array(4).fill(HOSTILE_BODY))
            const feed = ok(yield* chamber(["changes", "--tenant", seeded.tenant, "--json"]))
            assertInert(feed, "changes --json")
            assert.strictEqual(JSON.parse(feed).data[0].data.attributes.name, HOSTILE_NAME)

            // Text for people: nothing acts on the terminal.
            for (const args of [["deliveries", "list", "--tenant", seeded.tenant], ["hooks", "show", String(seeded.hook)], ["hooks", "list", "--tenant", seeded.tenant], ["changes", "--tenant", seeded.tenant]]) {
              assertInert(ok(yield* chamber(args)), args.join(" "))
            }

            // An import file's ref quoted in the error, as text and as JSON.
            const file = join(mkdtempSync(join(dir, "import-")), "bad.json")
            writeFileSync(file, JSON.stringify({ members: [{ ref: "m\x1b]0;ref\x07\u009b2J", name: "Cedar", status: "retired" }] }))
            const human = yield* chamber(["import", "--tenant", seeded.tenant, file])
            assert.strictEqual(human.code, 1)
            assertInert(human.stderr, "import's error")
            // The ref is quoted as JSON (ESC and BEL escaped there); the C1 CSI is made visible.
            assert.include(human.stderr, `(ref "m\\u001b]0;ref\\u0007\ufffd2J")`)
            const machine = yield* chamber(["import", "--tenant", seeded.tenant, file, "--json"])
            assertInert(machine.stderr, "import's JSON error")
            assert.strictEqual(JSON.parse(machine.stderr).problems[0].ref, "m\x1b]0;ref\x07\u009b2J")
          }).pipe(Effect.provideService(Env, envOf(config)))
        }), 180_000)
    })
  })
}

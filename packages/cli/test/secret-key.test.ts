/**
 * CHAMBER_SECRET_KEY as an operator meets it (docs/webhooks.md "Secrets", "Rotating
 * CHAMBER_SECRET_KEY"): `chamber serve` and `chamber relay` refuse to start, naming it, when the
 * stored webhook secrets are encrypted with another key or with one while none is set;
 * `chamber secrets rekey` re-encrypts them with a new key, reading them with the old one as
 * CHAMBER_SECRET_KEY_PREVIOUS; a relay that meets a secret of a key it lacks fails that delivery
 * with the reason, shown by `chamber deliveries list`. Each scenario on a database of its own.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import { runtimes } from "@chamber/pg-adapter/testing"
import { BIN, chamber, Env, envLayer, json, post, serving } from "./harness.ts"

const OLD = "the old key of the chamber's operator"
const NEW = "the new key of the chamber's operator"

/** The keys a process runs with; unset unless given. */
const keys = (current = "", previous = "") => ({ CHAMBER_SECRET_KEY: current, CHAMBER_SECRET_KEY_PREVIOUS: previous })

/** A chamber and a key that may subscribe and write members. */
const chamberWithKey = Effect.gen(function*() {
  const tenant = json(yield* chamber(["tenant", "create", "--name", `Keyed ${Math.random()}`, "--json"]))
  json(yield* chamber(["user", "add", "--tenant", tenant.id, "--email", "ops@keyed.example", "--role", "chamber_admin", "--json"]))
  const key = json(yield* chamber(["key", "mint", "--tenant", tenant.id, "--as", "ops@keyed.example", "--name", "k", "--scopes", "hooks:write,members:write", "--json"]))
    .key as string
  return { tenant: tenant.id as string, key }
})

/** `chamber serve` with `env` while `f` runs on it, then stopped. */
const whileServing = <A, E, R>(env: Record<string, string>, f: (port: number) => Effect.Effect<A, E, R>, args: ReadonlyArray<string> = []) =>
  Effect.scoped(Effect.gen(function*() {
    const server = yield* serving(args, env)
    const result = yield* f(server.port)
    server.child.kill("SIGTERM")
    assert.strictEqual(yield* Effect.promise(() => server.exited), 0, server.stdout() + server.stderr())
    return result
  }))

const subscribe = (port: number, key: string, path: string) =>
  Effect.map(post(port, "/api/v1/hooks", key, { url: `https://hooks.example.com/${path}`, events: ["member.created"] }), (r) => {
    assert.strictEqual(r.status, 201, JSON.stringify(r.body))
    return r.body as { readonly id: number; readonly secret: string }
  })

/**
 * POST /hooks with an Idempotency-Key: the status, the exact body and whether it was a replay. A
 * first answer's body is kept, sealed like the secret it holds.
 */
const subscribeKept = (port: number, key: string, path: string, idempotencyKey: string) =>
  Effect.promise(async () => {
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/hooks`, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "idempotency-key": idempotencyKey },
      body: JSON.stringify({ url: `https://hooks.example.com/${path}`, events: ["member.created"] })
    })
    return { status: res.status, body: await res.text(), replayed: res.headers.get("idempotent-replayed") === "true" }
  })

/** A start refused: exit 1, the message as `{"error"}` on stderr. */
const refused = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  Effect.map(chamber([...args, "--json"], env), (r) => {
    assert.strictEqual(r.code, 1, `${args.join(" ")}: ${r.stdout}${r.stderr}`)
    return JSON.parse(r.stderr).error as string
  })

const WRONG = (ids: string) =>
  `CHAMBER_SECRET_KEY does not decrypt the stored webhook secrets: they were encrypted with another key (the secret${ids}). ` +
  `Set CHAMBER_SECRET_KEY to the key that encrypted them (while changing keys, set that one as CHAMBER_SECRET_KEY_PREVIOUS: ` +
  `docs/webhooks.md "Rotating CHAMBER_SECRET_KEY").`

for (const rt of runtimes()) {
  // The real clock: the tests wait for processes.
  describe(`a wrong or missing CHAMBER_SECRET_KEY on ${rt.name}`, () => {
    layer(envLayer(rt), { timeout: 180_000, excludeTestServices: true })((it) => {
      it.effect("serve and relay refuse to start, naming CHAMBER_SECRET_KEY and the subscriptions; exit 1", () =>
        Effect.gen(function*() {
          const hook = yield* whileServing(keys(OLD), (port) => Effect.flatMap(chamberWithKey, ({ key }) => subscribe(port, key, "sealed")))
          assert.strictEqual(yield* refused(["serve", "--port", "0"], keys(NEW)), WRONG(` of subscription ${hook.id}`))
          const unset = `Webhook secrets are stored encrypted (the secret of subscription ${hook.id}), but CHAMBER_SECRET_KEY is not set. ` +
            "Set it to the key that encrypted them."
          assert.strictEqual(yield* refused(["serve", "--port", "0"], keys()), unset)
          assert.strictEqual(yield* refused(["relay"], keys()), unset)
          const text = yield* chamber(["relay"], keys(NEW))
          assert.deepStrictEqual([text.code, text.stderr], [1, `error: ${WRONG(` of subscription ${hook.id}`)}\n`])
        }), 180_000)

      it.effect("mid-rotation, a relay with the old key alone fails a new subscription's delivery with the reason, shown by deliveries list", () =>
        Effect.gen(function*() {
          const server = yield* serving(["--no-relay"], keys(NEW, OLD))
          const { key, tenant } = yield* chamberWithKey
          const base = yield* Env
          const relay = yield* Effect.acquireRelease(
            Effect.sync(() => spawn(process.execPath, [BIN, "relay"], { env: { ...process.env, ...base, ...keys(OLD), NO_COLOR: "1" } })),
            (child) => Effect.promise(() => new Promise<void>((resolve) => (child.exitCode !== null ? resolve() : (child.on("close", () => resolve()), child.kill("SIGTERM")))))
          )
          let out = ""
          relay.stdout.on("data", (d) => (out += d))
          relay.stderr.on("data", (d) => (out += d))
          for (let i = 0; i < 600 && !/Webhook relay running/.test(out) && relay.exitCode === null; i++) yield* Effect.sleep(50)
          assert.match(out, /Webhook relay running/)

          // Subscribed after the relay started: sealed with the new key, which the relay lacks.
          const hook = yield* subscribe(server.port, key, "new")
          assert.strictEqual((yield* post(server.port, "/api/v1/members", key, { name: "Mid-rotation Ltd", status: "active" })).status, 201)
          let deliveries: Array<any> = []
          for (let i = 0; i < 100 && (deliveries[0]?.attempts.length ?? 0) === 0; i++) {
            if (i > 0) yield* Effect.sleep(200)
            deliveries = json(yield* chamber(["deliveries", "list", "--tenant", tenant, "--hook", String(hook.id), "--json"]))
          }
          assert.deepInclude(deliveries[0], { hook_id: hook.id, status: "pending", attempt_count: 1 }, out)
          assert.deepInclude(deliveries[0].attempts[0], {
            status: null,
            error: "Not sent: This webhook subscription's signing secret cannot be read: it is encrypted with another key than " +
              "CHAMBER_SECRET_KEY (or CHAMBER_SECRET_KEY_PREVIOUS). Its operator must restore the key; or delete the subscription " +
              "and post its URL again for a new secret."
          })
          assert.notMatch(out, /claiming failed/)
        }), 180_000)
    })
  })

  describe(`rotating CHAMBER_SECRET_KEY with chamber secrets rekey on ${rt.name}`, () => {
    layer(envLayer(rt), { timeout: 180_000, excludeTestServices: true })((it) => {
      it.effect("secrets in the clear are encrypted, then re-encrypted with a new key read through CHAMBER_SECRET_KEY_PREVIOUS, kept answers holding one too; the old key no longer starts", () =>
        Effect.gen(function*() {
          const { clear, key, keptClear } = yield* whileServing(keys(), (port) =>
            Effect.gen(function*() {
              const { key } = yield* chamberWithKey
              return { clear: yield* subscribe(port, key, "clear"), key, keptClear: yield* subscribeKept(port, key, "kept-clear", "kept-clear") }
            }))
          assert.strictEqual(keptClear.status, 201, keptClear.body)
          // A key set later: what was stored in the clear is still read, new secrets are encrypted;
          // rekey encrypts the first. Run beside the server, as in a rolling rotation.
          const sealed = yield* whileServing(keys(OLD), (port) =>
            Effect.gen(function*() {
              assert.strictEqual((yield* subscribe(port, key, "clear")).secret, clear.secret)
              const sealed = yield* subscribe(port, key, "sealed")
              // Its kept answer holds the secret, sealed with OLD.
              const kept = yield* subscribeKept(port, key, "kept", "kept-sealed")
              assert.strictEqual(kept.status, 201, kept.body)
              assert.deepStrictEqual(json(yield* chamber(["secrets", "rekey", "--json"], keys(OLD))), {
                rekeyed: 2,
                unchanged: 2,
                damaged: [],
                previous_secrets: { rekeyed: 0, unchanged: 0, dropped: 0 },
                kept_answers: { rekeyed: 1, unchanged: 1, unreadable: 0 }
              })
              // Without the old key nothing changes, and the error says so.
              const hooks = [clear.id, sealed.id, JSON.parse(kept.body).id, JSON.parse(keptClear.body).id].sort((x, y) => x - y).join(", ")
              assert.strictEqual(yield* refused(["secrets", "rekey"], keys(NEW)), WRONG(`s of subscriptions ${hooks}`))
              assert.strictEqual(
                yield* refused(["secrets", "rekey"], keys("", OLD)),
                "CHAMBER_SECRET_KEY is not set: set it to the key to encrypt the webhook secrets with, and CHAMBER_SECRET_KEY_PREVIOUS to the key they are encrypted with now."
              )
              assert.deepStrictEqual(json(yield* chamber(["secrets", "rekey", "--json"], keys(NEW, OLD))), {
                rekeyed: 4,
                unchanged: 0,
                damaged: [],
                previous_secrets: { rekeyed: 0, unchanged: 0, dropped: 0 },
                kept_answers: { rekeyed: 2, unchanged: 0, unreadable: 0 }
              })
              const again = yield* chamber(["secrets", "rekey"], keys(NEW, OLD))
              assert.deepStrictEqual([again.code, again.stdout], [
                0,
                "Re-encrypted 0 webhook secrets with CHAMBER_SECRET_KEY; 4 already were.\n" +
                "Re-encrypted 0 previous secrets of rotated subscriptions; 0 already were; dropped 0 no longer signing.\n" +
                "Re-encrypted 0 kept Idempotency-Key answers holding a webhook secret; 2 already were.\n"
              ])
              return { sealed, kept, hooks }
            }))
          assert.strictEqual(yield* refused(["relay"], keys(OLD)), WRONG(`s of subscriptions ${sealed.hooks}`))
          // With NEW alone: the secrets are read, and a retry of each kept POST replays its answer byte for byte.
          const [secrets, replays] = yield* whileServing(keys(NEW), (port) =>
            Effect.all([
              Effect.all([subscribe(port, key, "clear"), subscribe(port, key, "sealed")]).pipe(Effect.map((hooks) => hooks.map((h) => h.secret))),
              Effect.all([subscribeKept(port, key, "kept", "kept-sealed"), subscribeKept(port, key, "kept-clear", "kept-clear")])
            ]))
          assert.deepStrictEqual(secrets, [clear.secret, sealed.sealed.secret])
          assert.deepStrictEqual(replays, [{ ...sealed.kept, replayed: true }, { ...keptClear, replayed: true }])
        }), 300_000)
    })
  })
}

/**
 * `chamber tui` end to end (docs/admin.md "Replaying failed deliveries"): the real command in a
 * terminal (tmux, 100x30) beside a real `chamber serve` on the embedded database, which it reaches
 * through the server's socket (docs/cli.md "The embedded database while the server runs"). A
 * subscription's delivery fails against a local HTTPS receiver answering 500; the receiver
 * recovers; the failed delivery is replayed from the Deliveries screen with two key presses and
 * arrives with the same event id and a valid X-CC-Signature, and the screen says it was
 * delivered. The subscription's secret is rotated from the Subscriptions screen, shown once, and
 * the next delivery carries both secrets' signatures. Then the server stops: the TUI says the
 * database does not answer, and it recovers when the server is back (never having taken the
 * database over). Fails, never skips, without tmux.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawnSync } from "node:child_process"
import { createHmac } from "node:crypto"
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { pgliteRuntime } from "@chamber/pg-adapter/testing"
import { startReceiver } from "@chamber/webhook-relay/test/receiver"
import { Webhook } from "standardwebhooks"
import { BIN, chamber, Env, envLayer, json, post, serving } from "../harness.ts"
import { suiteDir } from "../tempDirs.ts"

const dir = suiteDir("tui-e2e")
const SOCKET = join(dir, "tmux.sock")
const STACK = /^\s+at .+:\d+:\d+\)?$/m

/** tmux on a server of this test's own; fails the test (with what tmux said) unless it succeeds. */
const tmux = (...args: ReadonlyArray<string>) => {
  const r = spawnSync("tmux", ["-S", SOCKET, ...args], { encoding: "utf8" })
  if (r.error !== undefined) throw new Error(`tmux is needed for this test and could not run: ${r.error.message}. Install tmux (e.g. apt-get install tmux).`)
  if (r.status !== 0) throw new Error(`tmux ${args.join(" ")} failed (${r.status}): ${r.stderr}`)
  return r.stdout
}

const screen = () => tmux("capture-pane", "-p", "-t", "tui")
const screens: Array<string> = []

/** Resolves with the screen once it matches; fails with the screen after `timeoutMs`. */
const until = (pattern: RegExp, timeoutMs = 20_000) =>
  Effect.promise(async () => {
    const started = Date.now()
    for (;;) {
      const shown = screen()
      screens.push(shown)
      if (pattern.test(shown)) return shown
      if (Date.now() - started > timeoutMs) throw new Error(`no ${pattern} on the TUI's screen within ${timeoutMs} ms:\n${shown}`)
      await new Promise((r) => setTimeout(r, 100))
    }
  })

const keys = (...names: ReadonlyArray<string>) => Effect.sync(() => void tmux("send-keys", "-t", "tui", ...names))

describe("chamber tui in a terminal beside chamber serve on the embedded database", () => {
  layer(envLayer(pgliteRuntime), { timeout: 300_000 })((it) => {
    it.effect("replays a failed delivery from the Deliveries screen; it arrives signed with the same event id; the TUI outlives a server restart", () =>
      Effect.gen(function*() {
        tmux("-V")
        const receiver = yield* Effect.acquireRelease(Effect.promise(() => startReceiver({ defaultReply: { status: 500, body: "receiver down" } })), (r) =>
          Effect.promise(() => r.close()))
        const ca = join(dir, "receiver.pem")
        writeFileSync(ca, receiver.ca)
        const relayEnv = { NODE_EXTRA_CA_CERTS: ca, CHAMBER_WEBHOOK_ALLOW_PRIVATE: "true", CHAMBER_WEBHOOK_RETRY_DELAYS: "100ms,100ms,100ms" }

        const tenant = json(yield* chamber(["tenant", "create", "--name", "Harbor Chamber", "--json"])).id as string
        json(yield* chamber(["user", "add", "--tenant", tenant, "--email", "ops@harbor.example", "--role", "chamber_admin", "--json"]))
        const key = json(yield* chamber(["key", "mint", "--tenant", tenant, "--as", "ops@harbor.example", "--name", "Harbor CRM", "--scopes", "hooks:write,members:write", "--json"])).key as string
        const first = yield* serving([], relayEnv)
        yield* Effect.promise(() => first.waitFor(/Webhook relay: delivering in this process/))
        const hook = yield* post(first.port, "/api/v1/hooks", key, { url: `${receiver.url}/tui`, events: ["member.created"] })
        assert.strictEqual(hook.status, 201, JSON.stringify(hook.body))
        assert.strictEqual((yield* post(first.port, "/api/v1/members", key, { name: "Dockside Supply", status: "active" })).status, 201)
        const failedTries = yield* Effect.promise(() => receiver.waitFor(4, 30_000))
        let failed: Array<any> = []
        for (let i = 0; i < 100 && failed.length === 0; i++) {
          failed = json(yield* chamber(["deliveries", "list", "--tenant", tenant, "--status", "failed", "--json"]))
          if (failed.length === 0) yield* Effect.sleep(100)
        }
        assert.lengthOf(failed, 1)
        receiver.setDefault({ status: 200, body: "ok" })

        // The real command in a real terminal (CI stays set when it is: chamber tui draws anyway).
        const env: NodeJS.ProcessEnv = { ...process.env, ...(yield* Env), REDIS_URL: "", TERM: "xterm-256color" }
        const command = `'${process.execPath}' '${BIN}' tui --tenant ${tenant}; echo "EXITED $?"; sleep 60`
        yield* Effect.acquireRelease(
          Effect.sync(() => {
            const r = spawnSync("tmux", ["-S", SOCKET, "-f", "/dev/null", "new-session", "-d", "-s", "tui", "-x", "100", "-y", "30", command], { env, encoding: "utf8" })
            if (r.error !== undefined) throw new Error(`tmux is needed for this test and could not run: ${r.error.message}`)
            assert.strictEqual(r.status, 0, r.stderr)
          }),
          () => Effect.sync(() => void spawnSync("tmux", ["-S", SOCKET, "kill-server"]))
        )

        yield* until(/\[1 Keys\][\s\S]*Harbor CRM +cck_\w+ +members:write,hooks:write/)
        yield* keys("2")
        yield* until(/#\d+ +127\.0\.0\.1:\d+\/tui +member\.created +active +1 .*████/)
        yield* keys("3")
        const list = yield* until(new RegExp(`› +${failed[0].id} #${hook.body.id} +member\\.created +failed +4 500`))
        assert.include(list, "Deliveries · every status · every subscription · 1 shown")
        yield* keys("Enter")
        yield* until(/# +when +status +latency +response[\s\S]*4 +\S+ ago +500 +\d+ ms +receiver down/)
        yield* keys("Escape")
        yield* until(/enter attempts/)
        yield* keys("p")
        yield* until(new RegExp(`Replay delivery ${failed[0].id} \\(member\\.created, failed\\) to[\\s\\S]*y/n`))
        yield* keys("y")

        const all = yield* Effect.promise(() => receiver.waitFor(5, 30_000))
        const again = all[4]!
        const raw = again.body.toString("utf8")
        assert.strictEqual(again.path, "/tui")
        assert.strictEqual(again.headers["x-cc-delivery"], failed[0].event_id)
        assert.strictEqual(again.headers["x-cc-delivery"], failedTries[0]!.headers["x-cc-delivery"])
        assert.strictEqual(again.headers["x-cc-signature"], createHmac("sha256", hook.body.secret as string).update(raw).digest("hex"))
        assert.strictEqual(JSON.parse(raw).id, failed[0].event_id)
        yield* until(new RegExp(`Replayed delivery ${failed[0].id}: delivered \\(200 in \\d+ ms\\) ✓`))
        yield* until(new RegExp(`${failed[0].id} #${hook.body.id} +member\\.created +succeeded +1 200`))

        // The subscription's secret rotated from the Subscriptions screen: shown once, and the next
        // delivery signed with it and, during the overlap, with the old one too.
        yield* keys("2")
        yield* until(new RegExp(`› #${hook.body.id} +127\\.0\\.0\\.1:\\d+/tui +member\\.created +active +0 +20 `))
        yield* keys("s")
        yield* until(new RegExp(`Rotate the signing secret of #${hook.body.id} [\\s\\S]*y/n`))
        yield* keys("y")
        const rotated = yield* until(new RegExp(`New signing secret for #${hook.body.id}[\\s\\S]*whsec_[A-Za-z0-9+/]{43}=`))
        const secret = /whsec_[A-Za-z0-9+/]{43}=/.exec(rotated)![0]
        assert.notStrictEqual(secret, hook.body.secret)
        yield* keys("Enter")
        yield* until(new RegExp(`#${hook.body.id} signs with its new secret`))
        assert.strictEqual((yield* post(first.port, "/api/v1/members", key, { name: "Rotated Supply", status: "active" })).status, 201)
        const signed = (yield* Effect.promise(() => receiver.waitFor(6, 30_000)))[5]!
        const body = signed.body.toString("utf8")
        assert.strictEqual(signed.headers["x-cc-signature"], createHmac("sha256", secret).update(body).digest("hex"))
        assert.strictEqual(signed.headers["x-cc-signature-previous"], createHmac("sha256", hook.body.secret as string).update(body).digest("hex"))
        const standard = { "webhook-id": String(signed.headers["webhook-id"]), "webhook-timestamp": String(signed.headers["webhook-timestamp"]) }
        const [newer, older] = String(signed.headers["webhook-signature"]).split(" ")
        assert.doesNotThrow(() => new Webhook(secret).verify(body, { ...standard, "webhook-signature": newer! }))
        assert.doesNotThrow(() => new Webhook(hook.body.secret as string).verify(body, { ...standard, "webhook-signature": older! }))
        yield* keys("3")
        yield* until(/enter attempts/)

        // The server goes away, then comes back on the same data directory: the TUI never took the database over.
        first.child.kill("SIGTERM")
        assert.strictEqual(yield* Effect.promise(() => first.exited), 0)
        yield* until(/The database does not answer: [\s\S]*r to retry now/)
        const second = yield* serving([], relayEnv)
        assert.isAbove(second.port, 0)
        yield* until(new RegExp(`(?![\\s\\S]*does not answer)${failed[0].id} #${hook.body.id} +member\\.created +succeeded`), 30_000)
        yield* keys("q")
        yield* until(/EXITED 0/)
        assert.isFalse(screens.some((s) => STACK.test(s)), "no screen showed a stack trace")
      }), 300_000)
  })
})

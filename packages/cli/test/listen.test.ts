/**
 * `chamber listen` (docs/webhooks.md "Building a receiver locally") as an admin runs it, a
 * real process, on each storage runtime, forwarding to a plain-http receiver of the test's own on
 * loopback: every event of a burst committed after its start line arrives once, in feed order,
 * signed with the printed secret as a Standard Webhooks library verifies it; a receiver's non-2xx
 * is reported (its text inert) and the next event follows; SIGTERM and SIGINT end it with exit 0
 * within 3 s; no subscription is made.
 */
import { assert, describe, layer } from "@effect/vitest"
import * as Effect from "effect/Effect"
import { spawn } from "node:child_process"
import { createHmac } from "node:crypto"
import { writeFileSync } from "node:fs"
import { createServer, type IncomingHttpHeaders } from "node:http"
import type { AddressInfo } from "node:net"
import { join } from "node:path"
import { Webhook } from "standardwebhooks"
import { runtimes } from "@chamber/pg-adapter/testing"
import { BIN, chamber, chambers, Env, envLayer, json } from "./harness.ts"
import { suiteDir } from "./tempDirs.ts"

const dir = suiteDir("listen")

const importFile = (name: string, document: unknown) => {
  const file = join(dir, name)
  writeFileSync(file, JSON.stringify(document))
  return file
}

interface Received {
  readonly headers: IncomingHttpHeaders
  readonly body: string
}

/** Until `check` holds, polling every 20 ms; fails after `timeoutMs` saying what was awaited. */
const until = (what: string, check: () => boolean, timeoutMs = 30_000) =>
  Effect.promise(async () => {
    for (let waited = 0; !check(); waited += 20) {
      if (waited > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`)
      await new Promise((r) => setTimeout(r, 20))
    }
  })

/** An http receiver on loopback recording every request; `answer` says what each gets (by its arrival index). */
const receiver = (answer: (index: number) => { readonly status: number; readonly body: string } = () => ({ status: 200, body: "ok" })) =>
  Effect.acquireRelease(
    Effect.promise(() =>
      new Promise<{ readonly port: number; readonly received: Array<Received>; readonly close: () => void }>((resolve) => {
        const received: Array<Received> = []
        const server = createServer((req, res) => {
          let body = ""
          req.setEncoding("utf8")
          req.on("data", (d: string) => (body += d))
          req.on("end", () => {
            const { status, body: text } = answer(received.length)
            received.push({ headers: req.headers, body })
            res.writeHead(status, { "content-type": "text/plain" }).end(text)
          })
        })
        server.listen(0, "127.0.0.1", () =>
          resolve({ port: (server.address() as AddressInfo).port, received, close: () => server.close() }))
      })
    ),
    (r) => Effect.sync(() => r.close())
  )

/** `chamber listen …` in the background: its output so far, and its exit code and how long after `stop` it came. */
const listening = (args: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const env = yield* Env
    const child = yield* Effect.acquireRelease(
      Effect.sync(() => spawn(process.execPath, [BIN, "listen", ...args], { env: { ...process.env, REDIS_URL: "", ...env, NO_COLOR: "1" } })),
      (c) => Effect.sync(() => c.exitCode === null && c.signalCode === null && c.kill("SIGKILL"))
    )
    const out = { stdout: "", stderr: "" }
    child.stdout.on("data", (d) => (out.stdout += d))
    child.stderr.on("data", (d) => (out.stderr += d))
    const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)))
    const stop = (signal: NodeJS.Signals) =>
      Effect.promise(async () => {
        const sent = performance.now()
        child.kill(signal)
        const code = await exited
        return { code, ms: performance.now() - sent }
      })
    return { out, stop }
  })

for (const rt of runtimes()) {
  describe(`chamber listen on ${rt.name}`, () => {
    layer(envLayer(rt), { timeout: 180_000 })((it) => {
      /**
       * One chamber for the runtime's tests, made by the first that asks: each reads only what it
       * commits after its own start or cursor, so they hold in any order.
       */
      let made: string | undefined
      const listenChamber = Effect.gen(function*() {
        made ??= json(yield* chamber(["tenant", "create", "--name", "Listen Chamber", "--json"])).id as string
        return made
      })

      it.effect("--json: a burst after the start line arrives once each, in feed order, verifiable with the printed secret; SIGTERM exits 0 within 5 s; no subscription", () =>
        Effect.gen(function*() {
          const tenant = { id: yield* listenChamber }
          // Committed before it starts: never forwarded.
          json(yield* chamber(["import", "--tenant", tenant.id, importFile(`before-${rt.name}.json`, { members: [{ name: "Before", status: "active" }] }), "--json"]))
          const hook = yield* receiver()

          const listener = yield* listening(["--tenant", tenant.id, "--forward-to", `http://127.0.0.1:${hook.port}/hook`, "--json"])
          yield* until("the start line", () => listener.out.stdout.includes("\n"))
          const start = JSON.parse(listener.out.stdout.split("\n")[0]!)
          assert.deepStrictEqual(Object.keys(start), ["secret", "after"], listener.out.stderr)
          assert.match(start.secret, /^whsec_[A-Za-z0-9+/]{43}=$/)

          const members = Array.from({ length: 40 }, (_, i) => ({ name: `Burst ${i}`, status: "active" }))
          const contacts = Array.from({ length: 10 }, (_, i) => ({ first_name: `Ann${i}`, last_name: "Lee" }))
          json(yield* chamber(["import", "--tenant", tenant.id, importFile(`burst-${rt.name}.json`, { members, contacts }), "--json"]))

          // The feed after the start position: what must arrive, in this order.
          const feed = json(yield* chamber(["changes", "--tenant", tenant.id, "--after", start.after, "--json"]))
          assert.strictEqual(feed.data.length, 50)
          yield* until("every event at the receiver", () => hook.received.length >= 50)
          yield* until("a line per event", () => listener.out.stdout.trim().split("\n").length >= 51)

          const verifier = new Webhook(start.secret)
          const bodies = hook.received.map((r) => {
            const headers = Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, String(v)]))
            verifier.verify(r.body, headers) // throws unless signed with the printed secret
            assert.strictEqual(r.headers["x-cc-signature"], createHmac("sha256", start.secret).update(r.body).digest("hex"))
            assert.strictEqual(r.headers["webhook-id"], JSON.parse(r.body).id)
            return JSON.parse(r.body)
          })
          assert.deepStrictEqual(bodies, feed.data)
          assert.strictEqual(new Set(bodies.map((b) => b.id)).size, 50)

          const lines = listener.out.stdout.trim().split("\n").slice(1).map((l) => JSON.parse(l))
          assert.deepStrictEqual(lines.map((l) => [l.id, l.type, l.status]), feed.data.map((e: any) => [e.id, e.type, 200]))
          for (const line of lines) {
            assert.deepStrictEqual(Object.keys(line), ["id", "type", "status", "latency_ms"])
            assert.isAtLeast(line.latency_ms, 0)
          }

          const stopped = yield* listener.stop("SIGTERM")
          assert.strictEqual(stopped.code, 0, listener.out.stderr)
          assert.isBelow(stopped.ms, 5_000)
          assert.strictEqual(hook.received.length, 50)
          assert.deepStrictEqual(json(yield* chamber(["hooks", "list", "--tenant", tenant.id, "--json"])), [])
        }), 170_000)

      it.effect("text: --secret, --events and --after; a receiver's non-2xx is printed inert and the next event follows; SIGINT exits 0", () =>
        Effect.gen(function*() {
          const tenant = { id: yield* listenChamber }
          const first = json(yield* chamber(["changes", "--tenant", tenant.id, "--after", "head", "--json"]))
          // Committed before it starts but after the cursor it is given: forwarded.
          json(yield* chamber(["import", "--tenant", tenant.id, importFile(`text-${rt.name}.json`, {
            members: [{ name: "Skipped", status: "active" }],
            contacts: [{ first_name: "Bo", last_name: "One" }, { first_name: "Cy", last_name: "Two" }]
          }), "--json"]))
          const hook = yield* receiver((i) => i === 0 ? { status: 500, body: "down\u001b[2J" } : { status: 204, body: "" })
          const secret = "whsec_" + Buffer.alloc(32, 7).toString("base64")

          const listener = yield* listening([
            "--tenant", tenant.id, "--forward-to", `http://localhost:${hook.port}/hook`,
            "--events", "contact.created", "--after", first.meta.next_cursor, "--secret", secret
          ])
          yield* until("both contacts at the receiver", () => hook.received.length >= 2 && listener.out.stdout.split("\n").length >= 3)
          assert.match(listener.out.stderr, new RegExp(`^Forwarding to http://localhost:${hook.port}/hook, signing with ${secret.replace(/[+/]/g, "\\$&")}\n`))
          const verifier = new Webhook(secret)
          for (const r of hook.received) {
            verifier.verify(r.body, Object.fromEntries(Object.entries(r.headers).map(([k, v]) => [k, String(v)])))
          }
          assert.deepStrictEqual(hook.received.map((r) => JSON.parse(r.body).data.attributes.first_name), ["Bo", "Cy"])
          const [failed, next] = listener.out.stdout.trim().split("\n")
          assert.match(failed!, /^contact\.created {2}evt_\S+ {2}500 {2}\d+ ms {2}down␛\[2J$/)
          assert.match(next!, /^contact\.created {2}evt_\S+ {2}204 {2}\d+ ms$/)

          const stopped = yield* listener.stop("SIGINT")
          assert.strictEqual(stopped.code, 0, listener.out.stderr)
          assert.isBelow(stopped.ms, 5_000)
        }), 170_000)

      it.effect("refuses before it starts: a URL that is not http(s), a malformed secret, an unknown kind, a bad cursor", () =>
        Effect.gen(function*() {
          const tenant = { id: yield* listenChamber }
          const base = ["listen", "--tenant", tenant.id, "--json"]
          const cases: ReadonlyArray<readonly [ReadonlyArray<string>, RegExp]> = [
            [["--forward-to", "ftp://localhost/x"], /--forward-to must be an http or https URL/],
            [["--forward-to", "http://localhost:1/x", "--secret", "whsec_not base64!"], /whsec_ followed by standard base64/],
            [["--forward-to", "http://localhost:1/x", "--events", "member.created,member.eaten"], /--events names unknown event kinds: member\.eaten/],
            [["--forward-to", "http://localhost:1/x", "--after", "nope"], /after field must be head or a next_cursor/]
          ]
          const refusals = yield* chambers(cases.map(([args]) => [...base, ...args]))
          refusals.forEach((refused, i) => {
            assert.deepStrictEqual([refused.code, refused.stdout], [1, ""], refused.stderr)
            assert.match(JSON.parse(refused.stderr).error, cases[i]![1])
          })
        }), 170_000)
    })
  })
}

/**
 * The Redis fault drill of docs/operations.md "When Redis is unreachable", on the documented
 * deployment: two `chamber serve --no-relay` and two `chamber relay` on a PostgreSQL database of
 * the drill's own, rate limits in a `redis-server` of its own on a spare port (server A straight
 * to it, server B through a TCP proxy of the drill's), a webhook subscription to a receiver of its
 * own, and a load of writes (4 member creations to 1 GET /me) over keep-alive connections and
 * over a new connection per request, in a steady stream and in bursts. Meanwhile Redis goes away
 * and comes back, again and again, each time another way:
 *
 *   kill-burst      kill -9 a few ms after a burst of requests is sent, started again 1-2 s later
 *   kill-reconnect  kill -9, started again, killed again while the servers reconnect, started again
 *   stop            SIGSTOP for 1.5-3 s (a hang: the socket stays open and answers nothing), SIGCONT
 *   stop-kill       SIGSTOP, then kill -9 while stopped (commands owed, then a closed socket), started again
 *   proxy-reset     the proxy resets server B's connections (RST), Redis stays up
 *   proxy-swallow   the proxy takes B's commands and answers nothing for 2 s, then resets them
 *
 * Every request is recorded: a whole response (its status) or what happened instead (reset, a
 * socket closed without a response, a timeout). A 503 is allowed, as are 2xx; anything else is a
 * failure. A reset or close on a keep-alive connection reused after sitting idle for at least the
 * keep-alive timeout the server announced is the client's race with the server closing it (the
 * request never reached the server), counted apart. At the end every 201 must be a committed member, and each failed
 * write is looked up to say whether it committed.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres node scripts/redis-drill.ts [outages] [seconds between]
 *
 * The processes get this environment (CHAMBER_KEEP_ALIVE_TIMEOUT=5s, say, shows the races of a
 * pool that ignores the announcement). Prints a JSON summary; exits 1 when any request failed
 * (client races aside) or a 201 did not commit.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { rmSync, writeFileSync } from "node:fs"
import * as http from "node:http"
import * as https from "node:https"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { createConnection, createServer, type Socket } from "node:net"
import { fileURLToPath } from "node:url"
import pg from "pg"
import { testCertificate } from "../packages/webhook-relay/test/receiver.ts"

const OUTAGES = Number(process.argv[2] ?? 24)
const BETWEEN_MS = Number(process.argv[3] ?? 3) * 1_000
const ADMIN_URL = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"
const BIN = fileURLToPath(new URL("../packages/cli/src/bin.ts", import.meta.url))
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))
const between = (lo: number, hi: number) => lo + Math.floor(Math.random() * (hi - lo))

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer()
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port
      s.close(() => resolve(port))
    })
  })

// ---- the database, the processes ----

const dbName = `redis_drill_${process.pid}_${Date.now()}`
const admin = new pg.Client({ connectionString: ADMIN_URL })
await admin.connect()
await admin.query(`CREATE DATABASE ${dbName}`)
const dbUrl = new URL(ADMIN_URL)
dbUrl.pathname = `/${dbName}`
const env = {
  ...process.env,
  DATABASE_URL: dbUrl.toString(),
  NO_COLOR: "1",
  CHAMBER_RATE_LIMIT_PER_MINUTE: "1000000",
  CHAMBER_SECRET_KEY: "redis-drill-secret-key-redis-drill-secret-key",
  CHAMBER_WEBHOOK_ALLOW_PRIVATE: "true"
}
const children: Array<ChildProcess> = []
let redis: ChildProcess | undefined
let failed = true
const caFile = join(tmpdir(), `${dbName}.pem`)
try {
  const cli = (args: ReadonlyArray<string>) =>
    new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, [BIN, ...args], { env: { ...env, REDIS_URL: "" } })
      let out = ""
      let err = ""
      child.stdout.on("data", (d) => (out += d))
      child.stderr.on("data", (d) => (err += d))
      child.on("close", (code) => (code === 0 ? resolve(out) : reject(new Error(`chamber ${args.join(" ")}: ${err}`))))
    })

  interface Proc {
    readonly child: ChildProcess
    output: string
  }

  const start = (args: ReadonlyArray<string>, extra: Record<string, string>, ready: RegExp) =>
    new Promise<Proc>((resolve, reject) => {
      const child = spawn(process.execPath, [BIN, ...args], { env: { ...env, ...extra } })
      children.push(child)
      const proc: Proc = { child, output: "" }
      const on = (d: Buffer) => {
        proc.output += d
        if (ready.test(proc.output)) resolve(proc)
      }
      child.stdout!.on("data", on)
      child.stderr!.on("data", on)
      child.on("exit", (code) => reject(new Error(`chamber ${args[0]} exited (${code}): ${proc.output}`)))
    })

  const redisPort = await freePort()
  const startRedis = () =>
    new Promise<void>((resolve, reject) => {
      const child = spawn("redis-server", ["--port", String(redisPort), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
      redis = child
      let out = ""
      child.stdout.on("data", (d) => {
        out += d
        if (out.includes("Ready to accept connections")) resolve()
      })
      child.on("error", reject)
    })
  const signalRedis = (signal: NodeJS.Signals) =>
    new Promise<void>((resolve) => {
      const child = redis!
      if (signal !== "SIGKILL") return void (child.kill(signal), resolve())
      if (child.exitCode !== null || child.signalCode !== null) return resolve()
      child.once("exit", () => resolve())
      child.kill("SIGKILL")
    })
  await startRedis()

  /** Server B's way to Redis: passes, swallows (answers nothing), or resets every connection. */
  const proxied = new Set<Socket>()
  let swallowing = false
  const proxy = createServer((client) => {
    const upstream = createConnection(redisPort, "127.0.0.1")
    for (const s of [client, upstream]) {
      proxied.add(s)
      s.on("error", () => undefined)
      s.on("close", () => {
        proxied.delete(s)
        client.destroy()
        upstream.destroy()
      })
    }
    client.on("data", (d: Buffer) => void (swallowing || upstream.write(d)))
    upstream.on("data", (d: Buffer) => void (swallowing || client.write(d)))
  })
  await new Promise<void>((r) => proxy.listen(0, "127.0.0.1", () => r()))
  const proxyPort = (proxy.address() as { port: number }).port
  const resetProxied = () => {
    for (const s of proxied) s.resetAndDestroy()
  }

  /** The webhook receiver (HTTPS, trusted by the relays through NODE_EXTRA_CA_CERTS): answers 200 to every delivery. */
  const certificate = await testCertificate()
  writeFileSync(caFile, certificate.cert)
  let received = 0
  const receiver = https.createServer(certificate, (req, res) => {
    req.resume()
    req.on("end", () => {
      received++
      res.end("ok")
    })
  })
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", () => r()))
  const receiverPort = (receiver.address() as { port: number }).port

  const tenant = JSON.parse(await cli(["tenant", "create", "--name", "Drill", "--json"]))
  await cli(["user", "add", "--tenant", tenant.id, "--email", "ops@drill.example", "--role", "chamber_admin", "--json"])
  const key = JSON.parse(await cli(["key", "mint", "--tenant", tenant.id, "--as", "ops@drill.example", "--name", "drill", "--scopes", "all", "--json"]))
    .key as string

  const LISTENING = /Chamber Data API on http:\/\/[^\s"]+:(\d+)\/api\/v1/
  const serverA = await start(["serve", "--no-relay", "--port", "0"], { REDIS_URL: `redis://127.0.0.1:${redisPort}` }, LISTENING)
  const serverB = await start(["serve", "--no-relay", "--port", "0"], { REDIS_URL: `redis://127.0.0.1:${proxyPort}` }, LISTENING)
  const servers = [serverA, serverB]
  const ports = servers.map((s) => Number(LISTENING.exec(s.output)![1]))
  const relays = await Promise.all([0, 1].map(() => start(["relay"], { REDIS_URL: "", NODE_EXTRA_CA_CERTS: caFile }, /Webhook relay running/)))
  const hook = await fetch(`http://127.0.0.1:${ports[0]}/api/v1/hooks`, {
    method: "POST",
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify({ url: `https://127.0.0.1:${receiverPort}/hook`, events: ["member.created"] })
  })
  if (hook.status !== 201) throw new Error(`POST /hooks: ${hook.status} ${await hook.text()}`)
  /** What the API announces of its keep-alive timeout. */
  const keepAliveHeader = await new Promise<string>((resolve) =>
    http.get({ host: "127.0.0.1", port: ports[0], path: "/healthz", agent: new http.Agent({ keepAlive: true }) }, (res) => {
      res.resume()
      resolve(String(res.headers["keep-alive"]))
      res.socket.destroy()
    }))

  // ---- the load ----

  type Kind = "answered" | "reset" | "closed" | "timeout" | "other"
  interface Outcome {
    readonly n: number
    readonly method: string
    readonly kind: Kind
    readonly status: number
    readonly error?: string
    readonly keepAlive: "heeding" | "naive" | false
    readonly reused: boolean
    /** How long the connection sat idle before this request, when reused. */
    readonly idleMs: number
    readonly phase: string
  }

  /**
   * Two keep-alive pools: one drops a connection before the server's `Keep-Alive: timeout=N` says
   * it closes (as undici's fetch and load balancers configured below it do; Node's agent heeds the
   * hint only with a `timeout` of its own), one keeps connections for ever (Node's default agent).
   */
  const heeding = new http.Agent({ keepAlive: true, maxSockets: 64, timeout: 120_000 })
  const naive = new http.Agent({ keepAlive: true, maxSockets: 64 })
  const lastUsed = new WeakMap<Socket, number>()
  let phase = "warm-up"
  let sent = 0
  const outcomes: Array<Outcome> = []

  const send = (port: number, keepAlive: "heeding" | "naive" | false) =>
    new Promise<Outcome>((resolve) => {
      const n = sent++
      const write = n % 5 !== 4
      const payload = write ? JSON.stringify({ name: `drill-${n}`, status: "active" }) : undefined
      const at = phase
      let reused = false
      let idleMs = 0
      let done = false
      const finish = (kind: Kind, status: number, error?: string) => {
        if (done) return
        done = true
        resolve({ n, method: write ? "POST" : "GET", kind, status, error, keepAlive, reused, idleMs, phase: at })
      }
      const request = http.request({
        host: "127.0.0.1",
        port,
        method: write ? "POST" : "GET",
        path: write ? "/api/v1/members" : "/api/v1/me",
        agent: keepAlive === "heeding" ? heeding : keepAlive === "naive" ? naive : false,
        headers: { authorization: `Bearer ${key}`, ...(write ? { "content-type": "application/json" } : {}) },
        timeout: 15_000
      }, (response) => {
        response.on("data", () => undefined)
        response.on("end", () => {
          lastUsed.set(request.socket!, Date.now())
          finish("answered", response.statusCode ?? 0)
        })
        response.on("error", (e) => finish("closed", response.statusCode ?? 0, `mid-response: ${e.message}`))
      })
      request.on("socket", (socket: Socket) => {
        reused = request.reusedSocket
        const last = lastUsed.get(socket)
        idleMs = reused && last !== undefined ? Date.now() - last : 0
      })
      request.on("timeout", () => {
        finish("timeout", 0, "no response in 15 s")
        request.destroy()
      })
      request.on("error", (e: NodeJS.ErrnoException) =>
        finish(e.code === "ECONNRESET" && e.message === "socket hang up" ? "closed" : e.code === "ECONNRESET" ? "reset" : "other", 0, `${e.code} ${e.message}`))
      request.end(payload)
    })

  let stopped = false
  const pending = new Set<Promise<void>>()
  const track = (p: Promise<Outcome>) => {
    const q = p.then((o) => void outcomes.push(o))
    pending.add(q)
    void q.then(() => pending.delete(q))
    return q
  }
  /** A client sending one request after another, with a pause of 0-`thinkMs` between. */
  const worker = async (w: number, keepAlive: "heeding" | "naive" | false, thinkMs: number) => {
    for (let i = 0; !stopped; i++) {
      await track(send(ports[(w + i) % 2]!, keepAlive))
      if (thinkMs > 0) await sleep(between(0, thinkMs))
    }
  }
  /** `size` requests at once, a third over each keep-alive pool, a third over new connections. */
  const burst = (size: number) =>
    Promise.all(Array.from({ length: size }, (_, i) => track(send(ports[i % 2]!, ([false, "heeding", "naive"] as const)[i % 3]!))))

  const workers = [
    ...Array.from({ length: 4 }, (_, w) => worker(w, "heeding", 0)),
    ...Array.from({ length: 4 }, (_, w) => worker(w, "naive", 0)),
    ...Array.from({ length: 2 }, (_, w) => worker(w, "heeding", 400)),
    ...Array.from({ length: 2 }, (_, w) => worker(w, "naive", 400)),
    ...Array.from({ length: 4 }, (_, w) => worker(w, false, 20))
  ]
  // Bursts now and then, so the keep-alive pool grows and some of its connections sit idle.
  const bursts = (async () => {
    while (!stopped) {
      await sleep(between(500, 2_500))
      if (!stopped) void burst(between(10, 60))
    }
  })()

  // ---- the outages ----

  const backCount = () => servers.map((s) => (s.output.match(/Redis answers again/g) ?? []).length)
  /** Waits until both servers have said they are back on Redis once more than `before`. */
  const bothBack = async (before: ReadonlyArray<number>, label: string) => {
    for (const deadline = Date.now() + 30_000; Date.now() < deadline; await sleep(25)) {
      const now = backCount()
      // Server B never left Redis when only its proxy was cut; A needs no new line then.
      if (now.every((c, i) => c > before[i]! || (label.startsWith("proxy") && i === 0))) return
    }
    throw new Error(`${label}: the servers did not say they were back on Redis: ${servers.map((s) => s.output.slice(-1500)).join("\n---\n")}`)
  }

  const kinds = ["kill-burst", "kill-reconnect", "stop", "stop-kill", "proxy-reset", "proxy-swallow"] as const
  const counts: Record<string, number> = {}
  await sleep(3_000)
  for (let o = 0; o < OUTAGES; o++) {
    const kind = kinds[o % kinds.length]!
    counts[kind] = (counts[kind] ?? 0) + 1
    phase = `${kind}#${o}`
    const before = backCount()
    switch (kind) {
      case "kill-burst":
        void burst(60)
        await sleep(between(0, 15))
        await signalRedis("SIGKILL")
        await sleep(between(1_000, 2_000))
        await startRedis()
        break
      case "kill-reconnect":
        await signalRedis("SIGKILL")
        await sleep(between(300, 800))
        await startRedis()
        // The servers reconnect with a backoff of 50 ms doubling to 2 s: kill again while they do.
        await sleep(between(0, 150))
        void burst(30)
        await signalRedis("SIGKILL")
        await sleep(between(300, 1_200))
        await startRedis()
        break
      case "stop":
        void burst(40)
        await signalRedis("SIGSTOP")
        await sleep(between(1_500, 3_000))
        await signalRedis("SIGCONT")
        break
      case "stop-kill":
        await signalRedis("SIGSTOP")
        void burst(40)
        await sleep(between(400, 1_500))
        await signalRedis("SIGKILL")
        await sleep(between(200, 800))
        await startRedis()
        break
      case "proxy-reset":
        void burst(40)
        await sleep(between(0, 10))
        resetProxied()
        break
      case "proxy-swallow":
        swallowing = true
        void burst(40)
        await sleep(2_000)
        resetProxied()
        swallowing = false
        break
    }
    if (kind === "proxy-reset") await bothBack(before, "proxy").catch(() => undefined) // a reset between checks may go unnoticed
    else await bothBack(before, kind)
    phase = `after ${kind}#${o}`
    await sleep(BETWEEN_MS)
  }
  stopped = true
  await Promise.all([...workers, bursts])
  await Promise.all(pending)

  // ---- the verdict ----

  const db = new pg.Client({ connectionString: dbUrl.toString() })
  await db.connect()
  const { rows } = await db.query<{ name: string }>("SELECT name FROM members")
  await db.end()
  const committed = new Set(rows.map((r) => r.name))
  const ok = (o: Outcome) => o.kind === "answered" && ((o.status >= 200 && o.status < 300) || o.status === 503)
  /**
   * The client's keep-alive race: a request sent on a connection reused after sitting idle for at
   * least the server's announced keep-alive timeout, closed by the server as the request went out.
   */
  const announced = Number(/timeout=(\d+)/.exec(keepAliveHeader)?.[1] ?? 5) * 1_000
  const clientRace = (o: Outcome) => !ok(o) && o.reused && o.idleMs >= announced && (o.kind === "closed" || o.kind === "reset")
  const failures = outcomes.filter((o) => !ok(o) && !clientRace(o))
  const races = outcomes.filter(clientRace)
  const lostWrites = outcomes.filter((o) => o.method === "POST" && o.kind === "answered" && o.status === 201 && !committed.has(`drill-${o.n}`))
  const byKind = (list: ReadonlyArray<Outcome>) =>
    list.reduce<Record<string, number>>((m, o) => ((m[o.kind === "answered" ? `status ${o.status}` : o.kind] = (m[`${o.kind === "answered" ? `status ${o.status}` : o.kind}`] ?? 0) + 1), m), {})
  const statuses = outcomes.filter((o) => o.kind === "answered").reduce<Record<number, number>>((m, o) => ((m[o.status] = (m[o.status] ?? 0) + 1), m), {})
  const warned = servers.map((s) => (s.output.match(/Redis does not answer/g) ?? []).length)
  const errorLines = [...servers, ...relays].flatMap((s) => s.output.split("\n").filter((l) => /level.?.?(ERROR|FATAL)|Unhandled|uncaught/i.test(l)))

  const summary = {
    requests: outcomes.length,
    outages: counts,
    statuses,
    keepAliveAnnounced: keepAliveHeader,
    keepAliveRequests: { heeding: outcomes.filter((o) => o.keepAlive === "heeding").length, naive: outcomes.filter((o) => o.keepAlive === "naive").length },
    newConnectionRequests: outcomes.filter((o) => !o.keepAlive).length,
    failures: byKind(failures),
    failed: failures.slice(0, 20).map((o) => ({ ...o, committed: o.method === "POST" ? committed.has(`drill-${o.n}`) : undefined })),
    clientKeepAliveRaces: {
      count: races.length,
      byPool: { heeding: races.filter((o) => o.keepAlive === "heeding").length, naive: races.filter((o) => o.keepAlive === "naive").length },
      idleMs: races.map((o) => o.idleMs).sort((a, b) => a - b),
      errors: [...new Set(races.map((o) => o.error))],
      committed: races.filter((o) => committed.has(`drill-${o.n}`)).length
    },
    created: outcomes.filter((o) => o.method === "POST" && o.status === 201).length,
    membersInDatabase: committed.size,
    createdButNotCommitted: lostWrites.length,
    outageWarningsPerServer: warned,
    backOnRedisPerServer: backCount(),
    webhookDeliveriesReceived: received,
    errorLogLines: errorLines.slice(0, 10)
  }
  console.log(JSON.stringify(summary, null, 2))
  failed = failures.length > 0 || lostWrites.length > 0
} finally {
  for (const c of children) c.kill("SIGTERM")
  await Promise.all(children.map((c) => (c.exitCode !== null || c.signalCode !== null ? undefined : new Promise((r) => c.once("exit", r)))))
  redis?.kill("SIGKILL")
  rmSync(caFile, { force: true })
  await admin.query(`DROP DATABASE ${dbName} WITH (FORCE)`)
  await admin.end()
}
process.exit(failed ? 1 : 0)

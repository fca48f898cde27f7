/**
 * The rate-limit store's connection to Redis (docs/operations.md "When Redis is unreachable").
 * node-redis reconnects by itself when its socket closes, but waits for ever on a socket that
 * stays open and answers nothing: a network partition, or a proxy in front of Redis that
 * accepts connections while its Redis is gone. On an established connection every check would
 * then cost its whole timeout for as long as the kernel keeps the socket (many minutes), and
 * a new connection whose handshake is never answered would never become ready, so the limits
 * would never be shared again. Here a connection that owes replies and has given none for
 * `stuckAfterMs`, or whose handshake has lasted that long, is dropped for a new one.
 */
import * as Effect from "effect/Effect"
import { createClient } from "redis"

export interface RedisConnectionOptions {
  readonly url: string
  /** How long a connection may owe replies without giving any, or take over its handshake, before it is replaced. */
  readonly stuckAfterMs: number
}

export interface RedisConnection {
  /** Sends one command: fails at once while there is no ready connection (no offline queue). */
  readonly send: <T>(args: Array<string>) => Promise<T>
  /** Replaces the connection when it is stuck (see above); whether it did. */
  readonly replaceIfStuck: () => boolean
}

const clientFor = (url: string) =>
  createClient({
    url,
    disableOfflineQueue: true,
    socket: { connectTimeout: 1_000, reconnectStrategy: (retries: number) => Math.min(50 * 2 ** retries, 2_000) }
  })

/** One node-redis client and what it owes. */
interface Link {
  readonly client: ReturnType<typeof clientFor>
  /** Commands sent and not settled. */
  owed: number
  /** Since when the link has owed a reply without giving any (the last reply, or the first command owed). */
  owedSince: number | undefined
  /** When its socket connected, while the handshake on it is not done. */
  handshakeSince: number | undefined
}

const now = () => performance.now()

const open = (url: string): Link => {
  const client = clientFor(url)
  const link: Link = { client, owed: 0, owedSince: undefined, handshakeSince: undefined }
  client.on("connect", () => (link.handshakeSince = now()))
  client.on("ready", () => (link.handshakeSince = undefined))
  // Errors surface on the commands that meet them; the client reconnects by itself.
  client.on("error", () => (link.handshakeSince = undefined))
  return link
}

const settle = (link: Link) => () => {
  link.owed--
  link.owedSince = link.owed === 0 ? undefined : now()
}

const isStuck = (link: Link, after: number) => {
  const t = now()
  return (link.owedSince !== undefined && t - link.owedSince >= after) ||
    (link.handshakeSince !== undefined && t - link.handshakeSince >= after)
}

/**
 * A connection to `url` while the scope lives: the first attempt is awaited for at most 1.5 s
 * (the store starts without Redis if it does not answer soon); it is closed with the scope,
 * within a second.
 */
export const makeRedisConnection = Effect.fn("RedisConnection.make")(function*(options: RedisConnectionOptions) {
  let link = open(options.url)
  const connected = link.client.connect().then(() => true, () => false)
  yield* Effect.acquireRelease(
    Effect.promise(() => connected).pipe(Effect.timeoutOption(1_500)),
    // A graceful close waits for the replies owed, which a silent connection never gives.
    () => {
      const client = link.client
      return Effect.promise(() => (client.isOpen ? client.close().catch(() => undefined) : Promise.resolve())).pipe(
        Effect.timeoutOption(1_000),
        Effect.andThen(Effect.sync(() => client.destroy()))
      )
    }
  )
  return {
    send: <T>(args: Array<string>) => {
      const current = link
      if (current.owed++ === 0) current.owedSince = now()
      return current.client.sendCommand<T>(args).finally(settle(current))
    },
    replaceIfStuck: () => {
      const stuck = link
      if (!isStuck(stuck, options.stuckAfterMs)) return false
      link = open(options.url)
      link.client.connect().catch(() => {})
      // Whatever it still owes fails now: checks waiting on it are limited on this instance at once.
      stuck.client.destroy()
      return true
    }
  } satisfies RedisConnection
})

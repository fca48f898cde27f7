/** Tenants, people, keys, custom fields, migrations and the demo: short commands over the core services. */
import * as Effect from "effect/Effect"
import { type CustomFieldResource, displayPrefix, Keys, looksLikeKey, rateLimitKey, type Role, Tenants, Transactor } from "@chamber/core"
import { migrate } from "@chamber/pg-adapter"
import { seedDemo } from "../demo/Demo.ts"
import { demoProgress } from "../demo/progress.ts"
import { bold, dim, fail, green, table } from "../Output.ts"
import { run } from "../Run.ts"
import { describeScopes, fieldView, keyView, tenantView, usageView, userView, type WindowView } from "../Views.ts"

type Json = { readonly json?: boolean }

/**
 * What is wrong with a key prefix as the operator typed it, if anything: a prefix is `cck_` and 8
 * base62 characters, as `key list` shows it. A whole key is not echoed back: its prefix is said.
 */
const prefixProblem = (text: string): string | undefined =>
  /^cck_[0-9A-Za-z]{8}$/.test(text)
    ? undefined
    : looksLikeKey(text)
    ? `That is a whole key, not its prefix: give its first 12 characters, ${displayPrefix(text)}.`
    : `"${text}" is not a key prefix: a prefix is cck_ and 8 letters or digits, as key list shows it (e.g. cck_Xy12Ab34).`

/** Runs `command` for a well-formed prefix; refuses any other before opening the database. */
const withPrefix = (prefix: string, opts: Json, command: () => Promise<void>): Promise<void> => {
  const problem = prefixProblem(prefix)
  return problem === undefined ? command() : fail(opts.json === true, new Error(problem))
}

/** A chamber, and with `admin` its first chamber_admin, in one transaction: both or neither. */
export const tenantCreate = (opts: Json & {
  name: string
  website?: string
  currency?: string
  invoicePrefix?: string
  netTerms?: string
  admin?: string
}) =>
  run(opts, Effect.gen(function*() {
    const tenants = yield* Tenants
    const tx = yield* Transactor
    return yield* tx.withTransaction(Effect.gen(function*() {
      const tenant = yield* tenants.create({
        name: opts.name,
        website: opts.website ?? null,
        currency: opts.currency,
        invoice_prefix: opts.invoicePrefix,
        net_terms: opts.netTerms === undefined ? undefined : Number(opts.netTerms)
      })
      const admin = opts.admin === undefined ? undefined : yield* tenants.addUser(tenant.id, opts.admin, "chamber_admin")
      return { tenant, admin }
    }))
  }), {
    json: ({ tenant, admin }) => admin === undefined ? tenantView(tenant) : { ...tenantView(tenant), admin: userView(admin, tenant) },
    human: ({ tenant, admin }) =>
      admin === undefined
        ? `${green("Created")} ${bold(tenant.name)} ${dim(tenant.public_id)}`
        : [
          `${green("Created")} ${bold(tenant.name)} ${dim(tenant.public_id)} with ${admin.email} as chamber_admin`,
          "Its first key, with every scope (shown once):",
          `  chamber key mint --tenant ${tenant.public_id} --as ${admin.email} --name "My key" --scopes all`
        ].join("\n")
  })

export const tenantList = (opts: Json) =>
  run(opts, Effect.flatMap(Effect.service(Tenants), (t) => t.list), {
    json: (ts) => ts.map(tenantView),
    human: (ts) =>
      table(ts.map((t) => ({ ...tenantView(t), status: t.deleting_at === null ? "active" : "BEING DELETED" })), ["id", "name", "website", "currency", "created_at", "status"])
  })

export { tenantDelete } from "./tenantDelete.ts"

export const userAdd = (opts: Json & { tenant: string; email: string; role: string }) =>
  run(opts, Effect.gen(function*() {
    const tenants = yield* Tenants
    const tenant = yield* tenants.get(opts.tenant)
    const user = yield* tenants.addUser(tenant.id, opts.email, opts.role as Role)
    return { user, tenant }
  }), {
    json: ({ tenant, user }) => userView(user, tenant),
    human: ({ tenant, user }) => `${green("Added")} ${user.email} as ${user.role} of ${tenant.name}`
  })

export const userList = (opts: Json & { tenant: string }) =>
  run(opts, Effect.gen(function*() {
    const tenants = yield* Tenants
    const tenant = yield* tenants.get(opts.tenant)
    return (yield* tenants.listUsers(tenant.id)).map((u) => userView(u, tenant))
  }), {
    json: (people) => people,
    human: (people) => table(people, ["id", "email", "role", "created_at"])
  })

export const keyMint = (opts: Json & { tenant: string; as: string; name: string; scopes: string; dailyLimit?: string }) =>
  run(opts, Effect.flatMap(Effect.service(Keys), (k) =>
    k.mint({
      tenant: opts.tenant,
      asEmail: opts.as,
      name: opts.name,
      scopes: opts.scopes,
      dailyLimit: opts.dailyLimit === undefined ? undefined : Number(opts.dailyLimit)
    })), {
    json: (k) => ({ ...keyView(k), key: k.key }),
    human: (k) =>
      [
        `${green("Minted")} ${bold(k.name)} ${dim(k.prefix)} with ${k.scopes.length} scopes: ${k.scopes.join(", ") || "(none)"}`,
        `Key (shown once, never again): ${bold(k.key)}`
      ].join("\n")
  })

export const keyList = (opts: Json & { tenant: string }) =>
  run(opts, Effect.flatMap(Effect.service(Keys), (k) => k.list(opts.tenant)), {
    json: (ks) => ks.map(keyView),
    human: (ks) =>
      table(ks.map((k) => ({ ...keyView(k), scopes: describeScopes(k.scopes) })), ["id", "name", "prefix", "scopes", "created_at", "last_used_at", "revoked_at"])
  })

export const keyRevoke = (prefix: string, opts: Json) =>
  withPrefix(prefix, opts, () =>
    run(opts, Effect.flatMap(Effect.service(Keys), (k) => k.revoke(prefix)), {
      json: (ks) => ({ revoked: ks.map(keyView) }),
      human: (ks) => ks.map((k) => `${green("Revoked")} ${k.name} ${dim(k.prefix)}: it answers 401 from now on`).join("\n")
    }))

export const fieldAdd = (opts: Json & { tenant: string; resource: string; key: string; label: string; apiVisible?: boolean }) =>
  run(opts, Effect.flatMap(Effect.service(Tenants), (t) =>
    t.addField(opts.tenant, {
      resource: opts.resource as CustomFieldResource,
      key: opts.key,
      label: opts.label,
      api_visible: opts.apiVisible === true
    })), {
    json: fieldView,
    human: (f) => `${green("Added")} ${f.resource} field ${bold(f.key)} (${f.api_visible ? "visible in the API" : "hidden from the API"})`
  })

export const migrateCommand = (opts: Json) =>
  run(opts, migrate, {
    json: (applied) => ({ applied: applied.map(([id, name]) => ({ id, name })) }),
    human: (applied) =>
      applied.length === 0 ? "Database is up to date." : applied.map(([id, name]) => `${green("Applied")} ${id}_${name}`).join("\n")
  }, { migrateOnStart: false })

export const demoCommand = (opts: Json) =>
  run(opts, seedDemo(opts.json === true ? undefined : demoProgress), {
    json: (d) =>
      d.created
        ? { tenant: tenantView(d.tenant!), key: d.key, members: d.members }
        : { tenant: null, key: null, message: "The database already has data: nothing was changed." },
    human: (d) =>
      d.created
        ? [
          `${green("Demo chamber created:")} ${bold(d.tenant!.name)} ${dim(d.tenant!.public_id)} with ${d.members} members`,
          `Key with every scope (shown once): ${bold(d.key!)}`
        ].join("\n")
        : "The database already has data: nothing was changed."
  })

export const keySetLimit = (prefix: string, opts: Json & { daily: string }) =>
  withPrefix(prefix, opts, () =>
    run(opts, Effect.flatMap(Effect.service(Keys), (k) => k.setDailyLimit(prefix, Number(opts.daily))), {
      json: (ks) => ({ updated: ks.map(keyView) }),
      human: (ks) =>
        ks.map((k) => `${green("Set")} ${k.name} ${dim(k.prefix)}: at most ${k.daily_limit.toLocaleString("en-US")} requests in any 24 hours, from its next request`).join("\n")
    }))

export const keyUsage = (prefix: string, opts: Json) => withPrefix(prefix, opts, () => keyUsageOf(prefix, opts))

const keyUsageOf = async (prefix: string, opts: Json) => {
  const { describeStore, rateLimitSettingsFromEnv, usageOf } = await import("../RateLimits.ts")
  let settings
  try {
    settings = rateLimitSettingsFromEnv()
  } catch (error) {
    return fail(opts.json === true, error)
  }
  return run(opts, Effect.gen(function*() {
    const [key] = yield* (yield* Keys).live(prefix)
    const tenant = yield* (yield* Tenants).get(key!.tenant_id)
    const verdict = yield* usageOf(settings, rateLimitKey(tenant.public_id, key!.id), { perMinute: settings.perMinute, daily: key!.daily_limit })
    return usageView(key!, verdict, describeStore(settings))
  }), {
    json: (u) => u,
    human: (u) =>
      [
        `${bold(u.name)} ${dim(u.prefix)}  ${dim(`(counts ${u.store})`)}`,
        `  last minute:   ${windowLine(u.minute)}`,
        `  last 24 hours: ${windowLine(u.day)}`
      ].join("\n")
  })
}

const windowLine = (w: WindowView) =>
  `${w.used.toLocaleString("en-US")} of ${w.limit.toLocaleString("en-US")} used, ${w.remaining.toLocaleString("en-US")} left` +
  (w.used > 0 ? dim(`  (more back in ${inWords(w.back_in_seconds)})`) : "")

const inWords = (seconds: number) =>
  seconds < 120
    ? `${seconds} s`
    : seconds < 7_200
    ? `${Math.ceil(seconds / 60)} min`
    : `${Math.floor(Math.ceil(seconds / 60) / 60)} h ${Math.ceil(seconds / 60) % 60} min`

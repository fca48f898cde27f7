/** The `chamber` command line (docs/cli.md): names here are a contract. */
import { Command } from "commander"
import { readFileSync } from "node:fs"
import { inert, jsonText } from "./Inert.ts"
import { red } from "./Output.ts"

/** Commands load their modules on use, so `--help` and typos answer at once. */
// commander hands an action its arguments and options untyped; each command declares what it reads.
const admin = (name: keyof typeof import("./commands/admin.ts")) => async (...args: Array<unknown>): Promise<void> => {
  await ((await import("./commands/admin.ts"))[name] as (...a: Array<unknown>) => unknown)(...args)
}
const serve = async (options: unknown): Promise<void> => {
  // A new embedded database is made by a child process while the server's modules load.
  ;(await import("@chamber/pg-adapter/cluster")).startCluster(process.env)
  ;(await import("./commands/serve.ts")).serve(options as import("./commands/serve.ts").ServeOptions)
}

/** The product's version: the cli package's (docs/cli.md "Commands"). */
const version = (): string => (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }).version

/** The end of a command's help: how it is used (docs/cli.md "Commands"). */
const example = (...lines: ReadonlyArray<string>) => `\nExample${lines.length > 1 ? "s" : ""}:\n${lines.map((l) => `  $ ${l}`).join("\n")}`

const CHAMBER = "chm_4fQk2ZpL9sTx7BnA"

export const program = () => {
  const chamber = new Command("chamber")
    .description("Chamber Data API: serve, migrate, and administer chambers and keys")
    .version(version(), "-V, --version", "print the version")
    .addHelpText("after", example("chamber serve --demo-if-empty", `chamber user list --tenant ${CHAMBER}`))
  const json = (c: Command) => c.option("--json", "print exactly one JSON document")
  // Usage errors follow the --json contract too: one JSON object on stderr, exit code 1; without
  // it they are red on a terminal, like every other error. Subcommands inherit this.
  if (process.argv.includes("--json")) {
    chamber.configureOutput({
      writeErr: (text) => process.stderr.write(jsonText({ error: text.trim().replace(/^error: /, "") }) + "\n")
    })
  } else {
    chamber.configureOutput({ outputError: (text, write) => write(red(inert(text.trimEnd(), "lines")) + "\n") })
  }
  // An option's value is never another of the command's options: `--tenant --json` lacks the
  // chamber, as `--tenant` at the end does (commander would take `--json` for the chamber).
  chamber.hook("preAction", (_chamber, command) => {
    const flags = new Set(["-h", "--help", ...command.options.flatMap((o) => [o.short, o.long])])
    for (const option of command.options) {
      const value: unknown = command.getOptionValue(option.attributeName())
      if (option.required && typeof value === "string" && flags.has(value)) {
        command.error(`error: option '${option.flags}' argument missing`, { code: "commander.optionMissingArgument" })
      }
    }
  })

  json(chamber.command("serve").description("migrate, then serve /api/v1 and /docs (SIGINT/SIGTERM stop it gracefully)"))
    .option("--port <n>", "port (env PORT, default 3000)")
    .option("--host <h>", "host (env HOST, default 127.0.0.1)")
    .option("--no-relay", "do not run a webhook relay in this process")
    .option("--demo-if-empty", "seed the demo chamber first when the database is empty")
    .addHelpText(
      "after",
      example("chamber serve --port 8080 --host 0.0.0.0", "LOG_FORMAT=json CHAMBER_SHUTDOWN_TIMEOUT=10s chamber serve")
    )
    .action(serve)
  json(chamber.command("relay").description("run a webhook relay alone (several may run against one database)"))
    .addHelpText("after", example("chamber relay", "CHAMBER_WEBHOOK_TIMEOUT=5s chamber relay --json"))
    .action(async (options: unknown) => {
      ;(await import("./commands/relay.ts")).relay(options as { json?: boolean })
    })
  json(chamber.command("migrate").description("apply pending migrations and exit"))
    .addHelpText("after", example("chamber migrate --json"))
    .action(admin("migrateCommand"))
  json(chamber.command("demo").description("on an empty database: a demo chamber and a key with every scope"))
    .addHelpText("after", example("chamber demo"))
    .action(admin("demoCommand"))

  const importing = json(chamber.command("import").description("load a JSON document, or a CSV file per collection, into a chamber, all or nothing unless --skip-invalid"))
    .argument("[file]", "the JSON document (docs/cli.md \"Import\"); or give CSV files with --members, --contacts, …")
    .requiredOption("--tenant <id>", "chamber id (chm_...)")
    .option("--dry-run", "check every record and write nothing")
    .option("--skip-invalid", "write the valid records and list the refused ones with their problems in a file")
    .option("--rejected <path>", "with --skip-invalid: where that file goes (default: beside the input, <input>.rejected.json)")
    .addHelpText(
      "after",
      example(
        `chamber import --tenant ${CHAMBER} members.json --dry-run`,
        `chamber import --tenant ${CHAMBER} members.json`,
        `chamber import --tenant ${CHAMBER} --members members.csv --contacts contacts.csv --skip-invalid`,
        `chamber import --tenant ${CHAMBER} data.json --json`
      )
    )
    .action(async (file: string | undefined, options: unknown) => {
      await (await import("./commands/importFile.ts")).importFile(file, options as import("./commands/importFile.ts").ImportOptions)
    })
  // An option per collection the import takes, from core, loaded only when `import` runs (its action loads core anyway).
  chamber.hook("preSubcommand", async (_chamber, sub) => {
    if (sub !== importing) return
    const { ImportCollections } = await import("@chamber/core")
    for (const collection of ImportCollections) importing.option(`--${collection} <file.csv>`, `a CSV file of ${collection}`)
  })

  json(chamber.command("export").description("a chamber's data as an import document (JSON), or a CSV file per collection, with progress on stderr"))
    .requiredOption("--tenant <id>", "chamber id (chm_...)")
    .option("--out <path>", "the file to write (JSON; default stdout), or the directory (--format csv)")
    .option("--format <format>", "json or csv", "json")
    .addHelpText(
      "after",
      example(
        `chamber export --tenant ${CHAMBER} --out lakeside.json`,
        `chamber export --tenant ${CHAMBER} > lakeside.json`,
        `chamber export --tenant ${CHAMBER} --format csv --out lakeside-csv`
      )
    )
    .action(async (options: unknown) => {
      await (await import("./commands/exportData.ts")).exportData(options as import("./commands/exportData.ts").ExportOptions)
    })

  const tenant = chamber.command("tenant").description("chambers (tenants)")
    .addHelpText("after", example(`chamber tenant create --name "Lakeside Chamber"`, "chamber tenant list"))
  json(tenant.command("create").description("create a chamber"))
    .requiredOption("--name <name>", "chamber name")
    .option("--website <url>", "website")
    .option("--currency <code>", "ISO 4217 invoice currency", "USD")
    .option("--invoice-prefix <prefix>", "invoice number prefix", "INV-")
    .option("--net-terms <days>", "days until an issued invoice is due", "30")
    .option("--admin <email>", "its first chamber_admin (who may mint keys), added with it")
    .addHelpText(
      "after",
      example(
        `chamber tenant create --name "Lakeside Chamber" --admin ann@lakeside.example`,
        `chamber tenant create --name "Lakeside Chamber" --website https://lakeside.example --net-terms 15`
      )
    )
    .action(admin("tenantCreate"))
  json(tenant.command("list").description("all chambers"))
    .addHelpText("after", example("chamber tenant list --json"))
    .action(admin("tenantList"))
  json(tenant.command("delete").description("delete a chamber and everything stored of it (its keys stop at once)"))
    .argument("<id>", "chamber id (chm_...)")
    .requiredOption("--confirm <name>", "the chamber's name, exactly as tenant list shows it")
    .option("--dry-run", "count what would be deleted and change nothing")
    .option("--batch-size <n>", "rows removed per transaction, 1 to 10000", "500")
    .addHelpText(
      "after",
      example(`chamber tenant delete ${CHAMBER} --confirm "Lakeside Chamber" --dry-run`, `chamber tenant delete ${CHAMBER} --confirm "Lakeside Chamber"`)
    )
    .action(admin("tenantDelete"))

  const user = chamber.command("user").description("people of a chamber")
    .addHelpText("after", example(`chamber user add --tenant ${CHAMBER} --email ann@lakeside.example --role chamber_admin`))
  json(user.command("add").description("add a person to a chamber"))
    .requiredOption("--tenant <id>", "chamber id (chm_...)")
    .requiredOption("--email <email>", "email")
    .requiredOption("--role <role>", "chamber_admin or staff")
    .addHelpText("after", example(`chamber user add --tenant ${CHAMBER} --email sam@lakeside.example --role staff`))
    .action(admin("userAdd"))
  json(user.command("list").description("a chamber's people and their roles"))
    .requiredOption("--tenant <id>", "chamber id (chm_...)")
    .addHelpText("after", example(`chamber user list --tenant ${CHAMBER}`))
    .action(admin("userList"))

  const key = chamber.command("key").description("API keys")
    .addHelpText("after", example(`chamber key list --tenant ${CHAMBER}`))
  const mint = json(key.command("mint").description("mint a key (only a chamber_admin may); the key is shown once"))
    .requiredOption("--tenant <id>", "chamber id (chm_...)")
    .requiredOption("--as <email>", "the chamber_admin minting it")
    .requiredOption("--name <label>", "a label for the key")
    .requiredOption("--scopes <list>", "comma-separated scopes, or read, or all (listed below)")
    .option("--daily-limit <n>", "requests per rolling 24 h", "25000")
    .action(admin("keyMint"))
  // The scopes come from core, loaded only when `key mint` runs (its action loads core anyway).
  key.hook("preSubcommand", async (_key, sub) => {
    if (sub !== mint) return
    const { ALL_SCOPES, READ_SCOPES } = await import("@chamber/core")
    mint.addHelpText("after", [
      "",
      "Scopes:",
      ...ALL_SCOPES.map((s) => `  ${s}`),
      "Shorthands:",
      `  read  every :read scope but bookings:read (${READ_SCOPES.length} scopes)`,
      `  all   every scope (${ALL_SCOPES.length})`,
      example(
        `chamber key mint --tenant ${CHAMBER} --as ann@lakeside.example --name Zapier --scopes read`,
        `chamber key mint --tenant ${CHAMBER} --as ann@lakeside.example --name "CRM sync" --scopes members:read,members:write --daily-limit 5000`
      )
    ].join("\n"))
  })
  json(key.command("list").description("a chamber's keys")).requiredOption("--tenant <id>", "chamber id")
    .addHelpText("after", example(`chamber key list --tenant ${CHAMBER} --json`))
    .action(admin("keyList"))
  json(key.command("revoke").description("revoke a key by its prefix (cck_ + 8)")).argument("<prefix>")
    .addHelpText("after", example("chamber key revoke cck_Xy12Ab34"))
    .action(admin("keyRevoke"))
  json(key.command("set-limit").description("set a key's daily ceiling (requests in any 24 hours), from its next request"))
    .argument("<prefix>")
    .requiredOption("--daily <n>", "the new ceiling, 1 to 2147483647")
    .addHelpText("after", example("chamber key set-limit cck_Xy12Ab34 --daily 50000"))
    .action(admin("keySetLimit"))
  json(key.command("usage").description("a key's requests in the rolling minute and 24 hours, against its limits"))
    .argument("<prefix>")
    .addHelpText("after", example("chamber key usage cck_Xy12Ab34", "REDIS_URL=redis://cache:6379 chamber key usage cck_Xy12Ab34 --json"))
    .action(admin("keyUsage"))

  const webhooks = (name: keyof typeof import("./commands/webhooks.ts")) => async (...args: Array<unknown>): Promise<void> => {
    await ((await import("./commands/webhooks.ts"))[name] as (...a: Array<unknown>) => unknown)(...args)
  }
  const hooks = chamber.command("hooks").description("webhook subscriptions and their health")
    .addHelpText("after", example(`chamber hooks list --tenant ${CHAMBER}`, "chamber hooks show 3"))
  json(hooks.command("list").description("every subscription: url, events, active, failure count, last failure, last success"))
    .requiredOption("--tenant <id>", "chamber id (chm_...)")
    .addHelpText("after", example(`chamber hooks list --tenant ${CHAMBER} --json`))
    .action(webhooks("hooksList"))
  json(hooks.command("show").description("one subscription with its recent deliveries and their attempts")).argument("<id>")
    .addHelpText("after", example("chamber hooks show 3"))
    .action(webhooks("hooksShow"))
  json(hooks.command("reactivate").description("active again, failure count reset; its waiting deliveries go out")).argument("<id>")
    .addHelpText("after", example("chamber hooks reactivate 3"))
    .action(webhooks("hooksReactivate"))
  json(hooks.command("rotate-secret").description("a new signing secret, shown once; the old one signs beside it for a while")).argument("<id>")
    .option("--previous-expires-in <seconds>", "how long the old secret keeps signing, 0 to 604800 (default 86400; 0 ends it at once)")
    .addHelpText("after", example("chamber hooks rotate-secret 3", "chamber hooks rotate-secret 3 --previous-expires-in 0"))
    .action(webhooks("hooksRotateSecret"))
  const deliveries = chamber.command("deliveries").description("webhook deliveries and their attempts")
    .addHelpText("after", example(`chamber deliveries list --tenant ${CHAMBER} --status failed`, "chamber deliveries replay 812 813"))
  json(deliveries.command("list").description("deliveries with their attempts, newest first (100 at most)"))
    .requiredOption("--tenant <id>", "chamber id (chm_...)")
    .option("--status <status>", "pending, failed or succeeded")
    .option("--hook <id>", "one subscription's")
    .addHelpText("after", example(`chamber deliveries list --tenant ${CHAMBER} --status failed --hook 3 --json`))
    .action(webhooks("deliveriesList"))
  json(deliveries.command("summary").description("the backlog of every chamber: deliveries due now, the oldest's wait, held ones, subscriptions by state"))
    .addHelpText("after", example("chamber deliveries summary --json"))
    .action(webhooks("deliveriesSummary"))
  json(deliveries.command("replay").description("queue deliveries again: same event id, signed afresh, new attempts"))
    .argument("[ids...]", "delivery ids")
    .option("--hook <id>", "a subscription's deliveries (with --failed)")
    .option("--failed", "the failed ones")
    .option("--since <iso>", "made at or after this time")
    .addHelpText("after", example("chamber deliveries replay 812 813", "chamber deliveries replay --hook 3 --failed --since 2026-11-22T00:00:00Z"))
    .action(webhooks("deliveriesReplay"))

  json(chamber.command("changes").description("a chamber's change feed: every event in commit order, 100 a page (docs/cli.md \"Change feed\")"))
    .requiredOption("--tenant <id>", "chamber id (chm_...)")
    .option("--after <cursor>", "head, or the next cursor of an earlier page; without it, from the oldest event kept")
    .option("--types <kinds>", "comma-separated event kinds (member.created,invoice.paid,...)")
    .option("--follow", "keep polling and printing new events until Ctrl-C (with --json: one JSON line per event)")
    .addHelpText("after", example(`chamber changes --tenant ${CHAMBER}`, `chamber changes --tenant ${CHAMBER} --after head --follow`))
    .action(async (opts) => (await import("./commands/changes.ts")).changes(opts))

  chamber.command("listen").description("forward a chamber's events, signed as deliveries are, to a URL of your own (localhost too) until Ctrl-C; creates no subscription")
    .option("--json", "JSON lines: {secret, after} first, then {id, type, status, latency_ms} per event")
    .requiredOption("--tenant <id>", "chamber id (chm_...)")
    .requiredOption("--forward-to <url>", "where each event is POSTed (http or https)")
    .option("--events <kinds>", "comma-separated event kinds (member.created,invoice.paid,...); default every kind")
    .option("--after <cursor>", "a next cursor of the change feed to start after; default: from now")
    .option("--secret <whsec>", "the signing secret (whsec_ and base64); default: a new one, printed at the start")
    .addHelpText(
      "after",
      example(
        `chamber listen --tenant ${CHAMBER} --forward-to http://localhost:4000/hook`,
        `chamber listen --tenant ${CHAMBER} --forward-to http://localhost:4000/hook --events member.created,invoice.paid --json`
      )
    )
    .action(async (opts) => (await import("./commands/listen.ts")).listen(opts))

  const secrets = chamber.command("secrets").description("webhook signing secrets at rest (CHAMBER_SECRET_KEY)")
    .addHelpText("after", example("CHAMBER_SECRET_KEY_PREVIOUS=\"$OLD_KEY\" CHAMBER_SECRET_KEY=\"$NEW_KEY\" chamber secrets rekey"))
  json(secrets.command("rekey").description(
    "re-encrypt every sealed value (webhook secrets, previous secrets, kept Idempotency-Key answers holding one) with CHAMBER_SECRET_KEY, " +
      "reading each with it or CHAMBER_SECRET_KEY_PREVIOUS, in pages while servers run; says how many of each"
  ))
    .addHelpText("after", example("CHAMBER_SECRET_KEY_PREVIOUS=\"$OLD_KEY\" CHAMBER_SECRET_KEY=\"$NEW_KEY\" chamber secrets rekey --json"))
    .action(async (options: unknown) => {
      await (await import("./commands/secrets.ts")).secretsRekey(options as { json?: boolean })
    })

  json(chamber.command("tui").description("the admin dashboard: keys, subscriptions and their health, deliveries, replay (docs/admin.md)"))
    .option("--tenant <id>", "the chamber to open (chm_...); else choose one")
    .addHelpText("after", example("chamber tui", `chamber tui --tenant ${CHAMBER}`))
    .action(async (options: unknown) => {
      await (await import("./commands/tui.ts")).tui(options as { tenant?: string; json?: boolean })
    })

  const field = chamber.command("field").description("custom fields")
    .addHelpText("after", example(`chamber field add --tenant ${CHAMBER} --resource member --key tier --label Tier --api-visible`))
  json(field.command("add").description("define a custom field"))
    .requiredOption("--tenant <id>", "chamber id")
    .requiredOption("--resource <resource>", "member or contact")
    .requiredOption("--key <key>", "field key")
    .requiredOption("--label <label>", "label")
    .option("--api-visible", "show it in the API's custom_fields")
    .addHelpText("after", example(`chamber field add --tenant ${CHAMBER} --resource member --key tier --label "Membership tier" --api-visible`))
    .action(admin("fieldAdd"))
  return chamber
}

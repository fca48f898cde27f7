/** The `chamber` command line (docs/cli.md): names here are a contract. */
import { Command } from "commander"

/** Commands load their modules on use, so `--help` and typos answer at once. */
// commander hands an action its arguments and options untyped; each command declares what it reads.
const admin = (name: keyof typeof import("./commands/admin.ts")) => async (...args: Array<unknown>): Promise<void> => {
  await ((await import("./commands/admin.ts"))[name] as (...a: Array<unknown>) => unknown)(...args)
}
const serve = async (options: unknown): Promise<void> => {
  ;(await import("./commands/serve.ts")).serve(options as import("./commands/serve.ts").ServeOptions)
}

export const program = () => {
  const chamber = new Command("chamber").description("Chamber Data API: serve, migrate, and administer chambers and keys")
  const json = (c: Command) => c.option("--json", "print exactly one JSON document")
  // Usage errors follow the --json contract too: one JSON object on stderr, exit code 1.
  if (process.argv.includes("--json")) {
    chamber.configureOutput({
      writeErr: (text) => process.stderr.write(JSON.stringify({ error: text.trim().replace(/^error: /, "") }) + "\n")
    })
  }

  json(chamber.command("serve").description("migrate, then serve /api/v1 and /docs (SIGINT/SIGTERM stop it gracefully)"))
    .option("--port <n>", "port (env PORT, default 3000)")
    .option("--host <h>", "host (env HOST, default 127.0.0.1)")
    .option("--no-relay", "do not run a webhook relay in this process")
    .option("--demo-if-empty", "seed the demo chamber first when the database is empty")
    .action(serve)
  json(chamber.command("migrate").description("apply pending migrations and exit")).action(admin("migrateCommand"))
  json(chamber.command("demo").description("on an empty database: a demo chamber and a key with every scope")).action(admin("demoCommand"))

  const tenant = chamber.command("tenant").description("chambers (tenants)")
  json(tenant.command("create").description("create a chamber"))
    .requiredOption("--name <name>", "chamber name")
    .option("--website <url>", "website")
    .option("--currency <code>", "ISO 4217 invoice currency", "USD")
    .option("--invoice-prefix <prefix>", "invoice number prefix", "INV-")
    .option("--net-terms <days>", "days until an issued invoice is due", "30")
    .action(admin("tenantCreate"))
  json(tenant.command("list").description("all chambers")).action(admin("tenantList"))

  const user = chamber.command("user").description("people of a chamber")
  json(user.command("add").description("add a person to a chamber"))
    .requiredOption("--tenant <id>", "chamber id (chm_...)")
    .requiredOption("--email <email>", "email")
    .requiredOption("--role <role>", "chamber_admin or staff")
    .action(admin("userAdd"))

  const key = chamber.command("key").description("API keys")
  json(key.command("mint").description("mint a key (only a chamber_admin may); the key is shown once"))
    .requiredOption("--tenant <id>", "chamber id (chm_...)")
    .requiredOption("--as <email>", "the chamber_admin minting it")
    .requiredOption("--name <label>", "a label for the key")
    .requiredOption("--scopes <list>", "comma-separated scopes, or read, or all")
    .option("--daily-limit <n>", "requests per rolling 24 h", "25000")
    .action(admin("keyMint"))
  json(key.command("list").description("a chamber's keys")).requiredOption("--tenant <id>", "chamber id").action(admin("keyList"))
  json(key.command("revoke").description("revoke a key by its prefix (cck_ + 8)")).argument("<prefix>").action(admin("keyRevoke"))

  const field = chamber.command("field").description("custom fields")
  json(field.command("add").description("define a custom field"))
    .requiredOption("--tenant <id>", "chamber id")
    .requiredOption("--resource <resource>", "member or contact")
    .requiredOption("--key <key>", "field key")
    .requiredOption("--label <label>", "label")
    .option("--api-visible", "show it in the API's custom_fields")
    .action(admin("fieldAdd"))
  return chamber
}

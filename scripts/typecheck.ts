// Type-checks every package with its own tsconfig (strict), two at a time.
import { spawn } from "node:child_process"
import { readdirSync, existsSync } from "node:fs"

const packages = readdirSync("packages").filter((p) => existsSync(`packages/${p}/tsconfig.json`))
const tsc = "node_modules/typescript/bin/tsc"
let failed = false

const check = (pkg: string) =>
  new Promise<void>((resolve) => {
    const child = spawn(process.execPath, [tsc, "-p", `packages/${pkg}`], { stdio: ["ignore", "pipe", "pipe"] })
    let out = ""
    child.stdout.on("data", (d) => (out += d))
    child.stderr.on("data", (d) => (out += d))
    child.on("close", (code) => {
      console.log(`typecheck ${pkg}: ${code === 0 ? "ok" : "FAILED"}`)
      if (code !== 0) {
        failed = true
        console.log(out)
      }
      resolve()
    })
  })

const queue = [...packages]
await Promise.all([0, 1].map(async () => {
  for (let pkg = queue.shift(); pkg !== undefined; pkg = queue.shift()) await check(pkg)
}))
process.exit(failed ? 1 : 0)

/**
 * Another process holding the embedded database, as a long `chamber import` does: it connects
 * through the socket of the data directory named by its argument, opens a transaction that reads,
 * says `holding` on stdout and keeps the transaction open until a line arrives on stdin; then it
 * commits and says `committed`.
 */
import pg from "pg"

const client = new pg.Client({ host: process.argv[2], port: 5432, user: "postgres", database: "postgres" })
await client.connect()
await client.query("BEGIN")
await client.query("SELECT count(*) FROM members")
process.stdout.write("holding\n")
process.stdin.once("data", () => {
  void client.query("COMMIT").then(() => client.end()).then(() => {
    process.stdout.write("committed\n")
    process.stdin.destroy()
  })
})

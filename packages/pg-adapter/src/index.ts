/** @chamber/pg-adapter: migrations, repositories and the database for both runtimes. */
import { Layer } from "effect"
import { Keys, Members, Tenants } from "@chamber/core"
import { type DatabaseConfig, DatabaseLive, type DatabaseOptions } from "./Database.ts"
import { ApiKeyRepoSql } from "./repos/ApiKeyRepoSql.ts"
import { KeyHasherNode, TransactorSql } from "./repos/Infrastructure.ts"
import { MemberRepoSql } from "./repos/MemberRepoSql.ts"
import { OutboxSql } from "./repos/OutboxSql.ts"
import { TenantRepoSql } from "./repos/TenantRepoSql.ts"

export * from "./Database.ts"
export { EmbeddedInUse, embeddedOwner, openEmbedded, socketPath } from "./embedded/EmbeddedDatabase.ts"
export type { PgliteWire } from "./embedded/PgliteWire.ts"
export { ApiKeyRepoSql, KeyHasherNode, MemberRepoSql, OutboxSql, TenantRepoSql, TransactorSql }

/** Every repository and infrastructure port over an SqlClient. */
export const RepositoriesLive = Layer.mergeAll(TenantRepoSql, ApiKeyRepoSql, MemberRepoSql, OutboxSql, TransactorSql, KeyHasherNode)

/** The core services wired to the repositories. */
export const ServicesLive = Layer.mergeAll(Members.layer, Keys.layer).pipe(
  Layer.provideMerge(Tenants.layer),
  Layer.provideMerge(RepositoriesLive)
)

/** Core services plus the database they run on, migrated. */
export const StorageLive = (config: DatabaseConfig, options?: DatabaseOptions) =>
  ServicesLive.pipe(Layer.provideMerge(DatabaseLive(config, options)))

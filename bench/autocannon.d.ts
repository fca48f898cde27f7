// autocannon ships no types; the bench uses its programmatic API loosely (see run.ts `fire`).
declare module "autocannon" {
  const autocannon: (options: Record<string, unknown>, callback?: (error: unknown, result: any) => void) => any
  export default autocannon
}

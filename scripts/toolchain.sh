# Sourced by .ci/run and by developers: puts Node >= 22.19 and pnpm on PATH.
# When the machine's Node is older, Node 24 comes from the npm package node@24,
# cached under .tools/ (a few seconds the first time). pnpm comes from npm too.
_chamber_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
_chamber_tools="$_chamber_root/.tools"

_chamber_node_ok() {
  command -v node >/dev/null 2>&1 || return 1
  node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>22||(a===22&&b>=19)?0:1)'
}

if ! _chamber_node_ok; then
  if [ ! -x "$_chamber_tools/node_modules/.bin/node" ]; then
    echo "toolchain: installing Node 24 from npm (node@24) into .tools/" >&2
    npm install --prefix "$_chamber_tools" --no-save --no-audit --no-fund --loglevel=error node@24 >&2
  fi
  export PATH="$_chamber_tools/node_modules/.bin:$PATH"
fi
if ! command -v pnpm >/dev/null 2>&1; then
  if [ ! -x "$_chamber_tools/pnpm/node_modules/.bin/pnpm" ]; then
    echo "toolchain: installing pnpm from npm into .tools/pnpm" >&2
    npm install --prefix "$_chamber_tools/pnpm" --no-save --no-audit --no-fund --loglevel=error pnpm@10 >&2
  fi
  export PATH="$_chamber_tools/pnpm/node_modules/.bin:$PATH"
fi
_chamber_node_ok || { echo "toolchain: Node >= 22.19 is required (found $(node -v 2>/dev/null))" >&2; return 1 2>/dev/null || exit 1; }
unset _chamber_root _chamber_tools

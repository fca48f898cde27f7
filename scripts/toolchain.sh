# Sourced by .ci/run and by developers: puts Node >= 22.19 and pnpm >= 9 on PATH.
# When the machine's Node is older (README asks for Node >= 20 with npm), Node 24 comes from the
# npm package node@24, cached under .tools/ (a few seconds the first time). A pnpm already on PATH
# is used as it is when it is 9 or newer (9, 10, 11 and 12 all install and run this project, and
# nothing here pins one); with none, or an older one, pnpm 10 comes from npm into .tools/pnpm.
_chamber_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
_chamber_tools="$_chamber_root/.tools"

_chamber_node_ok() {
  command -v node >/dev/null 2>&1 || return 1
  node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>22||(a===22&&b>=19)?0:1)'
}

# The major version of the pnpm on PATH, asked outside any project so that no project setting
# can get in the way; empty when there is none or it does not answer.
_chamber_pnpm_major() {
  command -v pnpm >/dev/null 2>&1 || return 0
  (cd / && pnpm --version 2>/dev/null </dev/null) | sed -n 's/^\([0-9][0-9]*\)\.[0-9].*/\1/p' | head -n 1 || true
}

if ! _chamber_node_ok; then
  if [ ! -x "$_chamber_tools/node_modules/.bin/node" ]; then
    echo "toolchain: installing Node 24 from npm (node@24) into .tools/" >&2
    npm install --prefix "$_chamber_tools" --no-save --no-audit --no-fund --loglevel=error node@24 >&2
  fi
  export PATH="$_chamber_tools/node_modules/.bin:$PATH"
fi
_chamber_pnpm="$(_chamber_pnpm_major)"
if [ -z "$_chamber_pnpm" ] || [ "$_chamber_pnpm" -lt 9 ]; then
  if [ -n "$_chamber_pnpm" ]; then
    echo "toolchain: the pnpm on PATH ($(command -v pnpm)) is older than 9; using pnpm 10 from .tools/pnpm" >&2
  elif command -v pnpm >/dev/null 2>&1; then
    echo "toolchain: the pnpm on PATH ($(command -v pnpm)) does not answer --version; using pnpm 10 from .tools/pnpm" >&2
  fi
  if [ ! -x "$_chamber_tools/pnpm/node_modules/.bin/pnpm" ]; then
    echo "toolchain: installing pnpm from npm into .tools/pnpm" >&2
    npm install --prefix "$_chamber_tools/pnpm" --no-save --no-audit --no-fund --loglevel=error pnpm@10 >&2
  fi
  export PATH="$_chamber_tools/pnpm/node_modules/.bin:$PATH"
fi
_chamber_node_ok || { echo "toolchain: Node >= 22.19 is required (found $(node -v 2>/dev/null))" >&2; return 1 2>/dev/null || exit 1; }
unset _chamber_root _chamber_tools _chamber_pnpm
unset -f _chamber_pnpm_major

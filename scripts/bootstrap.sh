#!/usr/bin/env bash
# Makes this checkout runnable: Node 22+ on PATH (from the npm registry's `node`
# package into .tools/ when the system Node is older), dependencies installed
# with `npm ci --ignore-scripts`, and Redis running on REDIS_HOST:REDIS_PORT (started locally if
# it is not). Source it to keep the PATH:  . scripts/bootstrap.sh
# A shell that sources this gets its own options back at the end: set -e left behind would end an
# interactive shell at its next failing command.
_bootstrap_caller_flags="$-"
_bootstrap_caller_pipefail="$(shopt -qo pipefail && echo -o || echo +o)"
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

# Machines whose TLS goes through a local CA need Node to trust the system bundle.
if [ -z "${NODE_EXTRA_CA_CERTS:-}" ] && [ -r /etc/ssl/certs/ca-certificates.crt ]; then
  export NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt
fi

node_ok() {
  command -v node >/dev/null 2>&1 && node -e '
    const [maj, min] = process.versions.node.split(".").map(Number);
    process.exit(maj > 22 || (maj === 22 && min >= 12) ? 0 : 1);'
}

if ! node_ok; then
  NODE_DIR="$ROOT/.tools/node22"
  if [ ! -x "$NODE_DIR/node_modules/node/bin/node" ]; then
    echo "bootstrap: installing Node 22 into .tools/node22" >&2
    mkdir -p "$NODE_DIR"
    npm install --prefix "$NODE_DIR" --no-save --no-audit --no-fund node@22 >&2
  fi
  export PATH="$NODE_DIR/node_modules/node/bin:$PATH"
fi
echo "bootstrap: node $(node --version)" >&2

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  # Exactly the lock or nothing (no `npm install` fallback), and no dependency's install script:
  # none is needed (docs/reliability.md#persistence-and-the-supply-chain). One that comes to be
  # needed gets its own line here: npm rebuild <package> --ignore-scripts=false
  npm ci --ignore-scripts --no-audit --no-fund >&2
fi

# A Redis named by REDIS_URL (a PaaS add-on, TLS, credentials), by sentinels or a Redis Cluster is the operator's: nothing is started for it.
if [ -n "${REDIS_SENTINELS:-}" ]; then
  echo "bootstrap: using the Redis master the sentinels of REDIS_SENTINELS name" >&2
elif [ -n "${REDIS_URL:-}" ]; then
  echo "bootstrap: using the Redis of REDIS_URL" >&2
elif [ -n "${REDIS_CLUSTER_NODES:-}" ]; then
  echo "bootstrap: using the Redis Cluster of REDIS_CLUSTER_NODES" >&2
else
  REDIS_HOST="${REDIS_HOST:-127.0.0.1}"
  REDIS_PORT="${REDIS_PORT:-6379}"
  redis_up() { node -e '
    const s = require("net").connect(+process.argv[2], process.argv[1]);
    s.on("connect", () => { s.write("PING\r\n"); });
    s.on("data", (d) => process.exit(String(d).startsWith("+PONG") ? 0 : 1));
    s.on("error", () => process.exit(1));
    setTimeout(() => process.exit(1), 1000);' "$REDIS_HOST" "$REDIS_PORT"; }
  if ! redis_up; then
    if command -v redis-server >/dev/null 2>&1; then
      echo "bootstrap: starting redis-server on port $REDIS_PORT" >&2
      mkdir -p /tmp/gw-redis
      redis-server --daemonize yes --bind 127.0.0.1 --port "$REDIS_PORT" --save "" --appendonly no \
        --dir /tmp/gw-redis --logfile /tmp/gw-redis/redis.log >&2
      for _ in $(seq 50); do redis_up && break; sleep 0.1; done
    fi
    redis_up || { echo "bootstrap: Redis is not reachable on $REDIS_HOST:$REDIS_PORT" >&2; exit 1; }
  fi
fi

if [ "${BASH_SOURCE[0]}" != "$0" ]; then
  case "$_bootstrap_caller_flags" in *e*) ;; *) set +e ;; esac
  case "$_bootstrap_caller_flags" in *u*) ;; *) set +u ;; esac
  set "$_bootstrap_caller_pipefail" pipefail
  unset _bootstrap_caller_flags _bootstrap_caller_pipefail
fi

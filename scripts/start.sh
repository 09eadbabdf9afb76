#!/usr/bin/env bash
# One command to install and run the gateway locally: the API plus one worker
# per provider in config.yaml.
#
#   ./scripts/start.sh          real upstreams: export PROVIDER_A/B/C_API_KEY and API_KEYS first
#   ./scripts/start.sh --demo   loopback stand-ins for the three upstream formats, a demo key
#
# Ctrl-C stops everything it started.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
. scripts/bootstrap.sh

pids=()
cleanup() { for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT INT TERM

NODE=(node --experimental-strip-types)
# The gateway's processes with the young generation at its full size from the start (docs/decisions/young-generation-size.md),
# without Node's SQLite experimental warning (src/process/quiet-sqlite-warning.ts).
GATEWAY_NODE=("${NODE[@]}" --min-semi-space-size=16 --import "$ROOT/src/process/quiet-sqlite-warning.ts")
# Log lines in words in a terminal; LOG_FORMAT=json asks for the JSON lines a log collector reads.
export LOG_FORMAT="${LOG_FORMAT:-text}"
PROVIDERS=(provider_a provider_b provider_c)

if [ "${1:-}" = "--demo" ]; then
  DEMO_DIR="$(mktemp -d)"
  declare -A FORMAT=([provider_a]=openai [provider_b]=gemini [provider_c]=anthropic)
  base="${DEMO_UPSTREAM_PORT:-9101}"
  declare -A PORT_OF=([provider_a]=$base [provider_b]=$((base + 1)) [provider_c]=$((base + 2)))
  : > "$DEMO_DIR/config.yaml"
  echo "providers:" >> "$DEMO_DIR/config.yaml"
  for p in "${PROVIDERS[@]}"; do
    key="demo-upstream-key-$p"
    "${NODE[@]}" test/support/fake-upstream-cli.ts --format "${FORMAT[$p]}" --port "${PORT_OF[$p]}" --key "$key" --chunk-delay-ms 30 > "$DEMO_DIR/$p.log" 2>&1 &
    pids+=($!)
    for _ in $(seq 300); do grep -q '^listening' "$DEMO_DIR/$p.log" && break; sleep 0.1; done
    url="$(sed -n 's/^listening //p' "$DEMO_DIR/$p.log")"
    if [ -z "$url" ]; then
      echo "demo: the $p upstream did not start on port ${PORT_OF[$p]} (DEMO_UPSTREAM_PORT picks another base):" >&2
      cat "$DEMO_DIR/$p.log" >&2
      exit 1
    fi
    var="$(echo "$p" | tr a-z A-Z)_API_KEY"
    export "$var=$key"
    # The provider's models as config.yaml lists them (chat and embedding models, upstream ids), at the loopback upstream.
    entry="$(node -e '
      const y = require("yaml"); const c = y.parse(require("fs").readFileSync("config.yaml", "utf8"));
      const p = c.providers.find((x) => x.name === process.argv[1]);
      const out = { models: p.models, embedding_models: p.embedding_models ?? [], upstream_models: p.upstream_models ?? {} };
      for (const [k, v] of Object.entries(out)) console.log(`    ${k}: ${JSON.stringify(v)}`);' "$p")"
    printf '  - name: %s\n    api_key_env: %s\n    base_url: %s\n%s\n' "$p" "$var" "$url" "$entry" >> "$DEMO_DIR/config.yaml"
  done
  export CONFIG_PATH="$DEMO_DIR/config.yaml"
  export API_KEYS="${API_KEYS:-gw_demo_local_key_change_me}"
  export DLP_ENABLED="${DLP_ENABLED:-true}"
  # The pages and what they read open without a key in the demo, so a browser is never asked for one.
  export PUBLIC_PATHS="${PUBLIC_PATHS:-/docs,/redoc,/openapi.json,/dashboard,/stats,/metrics,/health,/health/ready,/health/live}"
  echo "demo: loopback upstreams started; gateway key: $API_KEYS" >&2
fi

. scripts/embedding-model.sh

# Whether Redis may lose jobs, said once here in words rather than by every process.
"${GATEWAY_NODE[@]}" scripts/redis-durability.ts || true
export REDIS_DURABILITY_WARNING=false

for p in "${PROVIDERS[@]}"; do
  "${GATEWAY_NODE[@]}" workers/provider-worker.ts "$p" &
  pids+=($!)
done
"${GATEWAY_NODE[@]}" src/server.ts &
pids+=($!)
echo "gateway: http://localhost:${PORT:-8000}/v1 (Ctrl-C to stop)" >&2
if [ "${1:-}" = "--demo" ]; then
  echo "docs: http://localhost:${PORT:-8000}/docs  dashboard: http://localhost:${PORT:-8000}/dashboard (no key needed in the demo)" >&2
fi
wait -n "${pids[@]}"

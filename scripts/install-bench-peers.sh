#!/usr/bin/env bash
# Installs the peers of the peer benchmark (bench/peers.bench.ts) under .tools/peers/ (ignored by
# git), from the package registries only:
#   Portkey's gateway   npm  @portkey-ai/gateway   into .tools/peers/portkey
#   LiteLLM's proxy     PyPI litellm[proxy]        into the venv .tools/peers/litellm
#
#   bash scripts/install-bench-peers.sh [portkey] [litellm]     (default: both)
#
# Versions are pinned (PORTKEY_VERSION, LITELLM_VERSION override them), so a figure names what it
# was measured against; LiteLLM stays on the release issue 40 measured. Portkey's copy of
# @hono/node-server is held at 1.13.8 (an npm override): from 1.14 on (which its `^1.3.3` range lets
# npm pick), a Response built on a fetched one keeps the fetched one's read-only headers, and every
# streamed chat completion through Portkey fails with `TypeError: immutable` (Portkey-AI/gateway
# issue 1389). Each install is bounded in time (PEERS_INSTALL_TIMEOUT_S, default 900) and does
# nothing when that version is already there. Prints one line per peer: installed, present or
# FAILED; exits non-zero when one failed, so the bench can say so and go on without it.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PEERS="$ROOT/.tools/peers"
PORTKEY_VERSION="${PORTKEY_VERSION:-1.15.2}"
HONO_NODE_SERVER_VERSION=1.13.8
LITELLM_VERSION="${LITELLM_VERSION:-1.106.2}"
LIMIT="${PEERS_INSTALL_TIMEOUT_S:-900}"
mkdir -p "$PEERS"

install_portkey() {
  local dir="$PEERS/portkey" pkg="$PEERS/portkey/node_modules/@portkey-ai/gateway/package.json"
  # Present: that version, and no copy of @hono/node-server other than the pinned one anywhere in its tree.
  local other
  other="$(find "$dir/node_modules" -path '*/@hono/node-server/package.json' -exec grep -L "\"version\": \"$HONO_NODE_SERVER_VERSION\"" {} + 2>/dev/null || true)"
  if [ -f "$pkg" ] && grep -q "\"version\": \"$PORTKEY_VERSION\"" "$pkg" && [ -z "$other" ]; then
    echo "peers: portkey $PORTKEY_VERSION present"
    return 0
  fi
  mkdir -p "$dir"
  # A fresh tree each time, with the override in force for every copy of @hono/node-server.
  rm -rf "$dir/node_modules" "$dir/package-lock.json"
  printf '{"name":"bench-peer-portkey","private":true,"dependencies":{"@portkey-ai/gateway":"%s"},"overrides":{"@hono/node-server":"%s"}}\n' \
    "$PORTKEY_VERSION" "$HONO_NODE_SERVER_VERSION" > "$dir/package.json"
  # No install scripts: its only one is patch-package for its own development tree; the published build runs without it.
  if timeout "$LIMIT" npm install --prefix "$dir" --ignore-scripts --no-audit --no-fund > "$dir/install.log" 2>&1; then
    echo "peers: portkey $PORTKEY_VERSION installed"
  else
    echo "peers: portkey $PORTKEY_VERSION FAILED to install (see .tools/peers/portkey/install.log)" >&2
    return 1
  fi
}

install_litellm() {
  local venv="$PEERS/litellm"
  if [ -x "$venv/bin/litellm" ] && [ "$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("litellm"))' 2>/dev/null)" = "$LITELLM_VERSION" ]; then
    echo "peers: litellm $LITELLM_VERSION present"
    return 0
  fi
  command -v python3 >/dev/null || { echo "peers: litellm FAILED: no python3" >&2; return 1; }
  mkdir -p "$venv"
  if { [ -x "$venv/bin/python" ] || timeout 120 python3 -m venv "$venv"; } &&
     timeout "$LIMIT" "$venv/bin/pip" install -q "litellm[proxy]==$LITELLM_VERSION" > "$PEERS/litellm-install.log" 2>&1; then
    echo "peers: litellm $LITELLM_VERSION installed"
  else
    echo "peers: litellm $LITELLM_VERSION FAILED to install (see .tools/peers/litellm-install.log)" >&2
    return 1
  fi
}

which=("$@")
[ ${#which[@]} -eq 0 ] && which=(portkey litellm)
status=0
for peer in "${which[@]}"; do
  case "$peer" in
    portkey) install_portkey || status=1 ;;
    litellm) install_litellm || status=1 ;;
    *) echo "peers: unknown peer '$peer' (portkey, litellm)" >&2; status=2 ;;
  esac
done
exit $status

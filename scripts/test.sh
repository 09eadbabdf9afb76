#!/usr/bin/env bash
# The test command: bootstraps (Node 22, npm ci, Redis), type-checks, runs every suite.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
. scripts/bootstrap.sh
npm run typecheck
npx vitest run "$@"

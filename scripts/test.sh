#!/usr/bin/env bash
# The test command: bootstraps (Node 22, npm ci, Redis), type-checks, lints, checks
# the formatting, checks the docs' links and code references, then runs the main
# suites and the reliability suite. Arguments go to the main vitest run (and skip the reliability suite),
# e.g. ./scripts/test.sh test/e2e
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
. scripts/bootstrap.sh
npm run typecheck
npm run lint
npm run format:check
npm run check:docs
npx vitest run "$@"
if [ "$#" -eq 0 ]; then
  npx vitest run -c vitest.reliability.config.ts
fi

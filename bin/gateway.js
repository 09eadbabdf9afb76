#!/usr/bin/env -S node --experimental-strip-types --disable-warning=ExperimentalWarning
// The `gateway` command (package.json "bin"): `gateway keys create --owner alice`.
// Node 22.12+ runs the TypeScript sources directly; see src/cli/main.ts.
import { runCli } from '../src/cli/main.ts';

// Exit explicitly: a Redis or database handle left open must not keep the command alive.
process.exit(await runCli(process.argv.slice(2)));

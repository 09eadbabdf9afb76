import { dirname, join } from 'node:path';
import { freePort, spawnGatewayProcess, waitFor, type GatewayProcess } from './processes.ts';

/** One more API process (a replica), sharing Redis, config.yaml and the key-store database (batches, jobs) with a gateway from `startGateway`. */
export interface ApiReplica {
  baseUrl: string;
  process: GatewayProcess;
  stop(): Promise<void>;
}

export async function startApiReplica(env: Record<string, string>, configPath: string): Promise<ApiReplica> {
  const port = await freePort();
  const api = spawnGatewayProcess('src/server.ts', [], {
    LOG_LEVEL: 'warning',
    KEY_DB_PATH: join(dirname(configPath), 'keys.sqlite'),
    ...env,
    CONFIG_PATH: configPath,
    PORT: String(port),
    HOST: '127.0.0.1',
  });
  const baseUrl = `http://127.0.0.1:${port}`;
  await waitFor(
    async () => {
      if (api.child.exitCode !== null) throw new Error(`API replica exited:\n${api.output()}`);
      const res = await fetch(`${baseUrl}/health/live`);
      return res.status === 401 || res.status === 200;
    },
    20_000,
    'the API replica to listen',
  );
  return { baseUrl, process: api, stop: async () => void (await api.kill('SIGTERM')) };
}

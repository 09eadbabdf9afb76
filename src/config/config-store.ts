import type { GatewayConfig } from './gateway-config.ts';
import { loadConfigFile } from './gateway-config.ts';

/**
 * Holds the current configuration. A reload validates the file first and
 * swaps the whole object in one assignment, so a request sees either the old
 * or the new configuration, never a mix; an invalid file keeps the old one
 * and the error propagates to the caller.
 */
export class ConfigStore {
  private config: GatewayConfig;
  private readonly listeners = new Set<(config: GatewayConfig) => void>();

  private readonly path: string;

  constructor(initial: GatewayConfig, path: string) {
    this.config = initial;
    this.path = path;
  }

  static async open(path: string): Promise<ConfigStore> {
    return new ConfigStore(await loadConfigFile(path), path);
  }

  get current(): GatewayConfig {
    return this.config;
  }

  /** Re-reads the file; throws `ConfigError` and keeps the old config when it is invalid. */
  async reload(): Promise<GatewayConfig> {
    const next = await loadConfigFile(this.path);
    this.config = next;
    for (const listener of this.listeners) listener(next);
    return next;
  }

  onChange(listener: (config: GatewayConfig) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

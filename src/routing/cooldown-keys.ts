/**
 * Where deployment cooldowns live in Redis, shared by the workers that set
 * them and the API processes that read them. A deployment is a provider
 * entry of config.yaml, so keys are per provider name.
 *
 * - `<prefix>:cooldown:{<provider>}`: exists while the provider is out; its TTL is what is left.
 * - `<prefix>:cooldown-fails:{<provider>}`: 5xx/time-outs counted in the current window.
 *
 * The provider's hash tag (its queue's too) keeps the two keys of the
 * recorder's script in one slot on a Redis Cluster.
 * - channel `<prefix>:cooldown`: message `<provider> <remaining ms>` when one goes out.
 */

export function cooldownKey(prefix: string, provider: string): string {
  return `${prefix}:cooldown:{${provider}}`;
}

export function cooldownFailuresKey(prefix: string, provider: string): string {
  return `${prefix}:cooldown-fails:{${provider}}`;
}

export function cooldownChannel(prefix: string): string {
  return `${prefix}:cooldown`;
}

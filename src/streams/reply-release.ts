import type { Redis } from 'ioredis';

/**
 * Deletes a reply stream once nobody needs it any more, instead of leaving it
 * to its TTL (`RESPONSE_STREAM_TTL`, kept only as a safety net): at a few
 * thousand requests per second, streams living five minutes are most of what
 * Redis holds.
 *
 * A stream read by one request is deleted by that request as soon as it has
 * the terminal entry. A stream several requests read (identical misses
 * coalesced, `src/cache/request-coalescer.ts`) carries a count beside it,
 * `<stream>:n`: the leader adds the number of followers its claim gathered
 * (known once it releases the claim, after which nobody joins), each follower
 * takes one off when it is done, and whoever brings the count back to zero
 * deletes the stream, provided its last entry is terminal (a reader that gave
 * up early must not delete a stream a worker still writes: its XADDs would
 * make a new one without a TTL).
 */

/** Key of the count of readers still to finish a coalesced reply stream. */
export function replyReadersKey(streamKey: string): string {
  return `${streamKey}:n`;
}

// KEYS[1] reply stream, KEYS[2] its readers count. ARGV[1] what this reader changes the count by, ARGV[2] ttl of the
// count, ms. Returns 1 when the stream was deleted.
const SETTLE = `
local n = redis.call('INCRBY', KEYS[2], ARGV[1])
if n ~= 0 then
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
  return 0
end
redis.call('DEL', KEYS[2])
local last = redis.call('XREVRANGE', KEYS[1], '+', '-', 'COUNT', 1)[1]
if not last then return 0 end
local fields = last[2]
for i = 1, #fields, 2 do
  if fields[i] == 't' then
    local t = fields[i + 1]
    if t == 'result' or t == 'end' or t == 'error' then return redis.call('DEL', KEYS[1]) end
    return 0
  end
end
return 0`;

/** Options of {@link ReplyRelease}. */
export interface ReplyReleaseOptions {
  /** Command connection. */
  redis: Redis;
  /** How long a count of readers may outlive its last change, ms (`RESPONSE_STREAM_TTL`). @defaultValue 300000 */
  ttlMs?: number;
}

/** Tells Redis that one reader is done with a reply stream; see the module comment. */
export class ReplyRelease {
  private readonly options: ReplyReleaseOptions;

  constructor(options: ReplyReleaseOptions) {
    this.options = options;
  }

  /**
   * One reader is done with `streamKey`. `others`: how many other requests
   * read it through this one (a coalescing leader's followers; 0 when it read
   * alone), -1 for a follower, undefined when unknown (the stream is left to
   * its TTL). `terminal`: whether this reader had the terminal entry.
   */
  async done(streamKey: string, others: number | undefined, terminal: boolean): Promise<void> {
    if (others === undefined) return;
    const { redis } = this.options;
    if (others === 0) {
      // Read alone: one DEL, and only when no worker can still be writing.
      if (terminal) await redis.del(streamKey);
      return;
    }
    await redis.eval(SETTLE, 2, streamKey, replyReadersKey(streamKey), others, this.options.ttlMs ?? 300_000);
  }
}

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * Key of the ids' tags when JOB_ID_SECRET is unset. Public, so without the
 * secret anyone who reads this file can forge a tag; a forged id still only
 * ever turns its forger's own 404 into a 410 (the tag binds the owner, and
 * nothing stored is read to decide), but it could trip an alert on `job_lost`.
 */
const PUBLIC_KEY = 'llm-gateway asynchronous job ids';

const ID = /^cjob_([0-9a-f]{8})([0-9a-f]{24})([0-9a-f]{16})$/;

/**
 * Ids of asynchronous jobs that outlive the job's Redis record:
 * `cjob_` + 48 hex digits = the creation time (8: epoch seconds), 96 random
 * bits (24), and a tag (16): the first 64 bits of HMAC-SHA256 over time,
 * random part and owner, keyed with JOB_ID_SECRET. No secret is in the id.
 *
 * When a record is missing, a tag that verifies for the asking owner proves
 * that this gateway accepted the job for this owner at that time, so the API
 * can tell "Redis lost it" (410 `job_lost`) from "never existed" (404).
 */
export class AsyncJobIds {
  private readonly key: string;

  /** `secret`: JOB_ID_SECRET; the same in every API process, or their ids cannot vouch for each other's jobs. */
  constructor(secret: string | undefined) {
    this.key = secret ?? PUBLIC_KEY;
  }

  mint(owner: string, nowMs: number = Date.now()): string {
    const time = Math.floor(nowMs / 1000)
      .toString(16)
      .padStart(8, '0');
    const random = randomBytes(12).toString('hex');
    return `cjob_${time}${random}${this.tag(time, random, owner)}`;
  }

  /** Creation time (epoch seconds) of an id minted for `owner`; undefined for anything else. */
  createdAt(id: string, owner: string): number | undefined {
    const match = ID.exec(id);
    if (!match) return undefined;
    const [, time = '', random = '', tag = ''] = match;
    const expected = Buffer.from(this.tag(time, random, owner), 'hex');
    if (!timingSafeEqual(expected, Buffer.from(tag, 'hex'))) return undefined;
    return Number.parseInt(time, 16);
  }

  private tag(time: string, random: string, owner: string): string {
    return createHmac('sha256', this.key).update(`${time}${random}\n${owner}`).digest('hex').slice(0, 16);
  }
}

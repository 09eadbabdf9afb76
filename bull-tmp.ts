import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
const prefix = 'bullbench' + Date.now();
const mk = () => new Redis({ maxRetriesPerRequest: null, enableAutoPipelining: process.env.AP === '1' });
const queue = new Queue('q', { connection: mk(), prefix });
const waiters = new Map<string, () => void>();
const worker = new Worker('q', async (job) => { waiters.get(job.id!)?.(); return 1; }, { connection: mk(), prefix, concurrency: 128 });
await worker.waitUntilReady();
let n = 0, done = 0;
const end = Date.now() + 5000;
const t0 = Date.now();
await Promise.all(Array.from({ length: 64 }, async () => {
  while (Date.now() < end) {
    const id = 'j' + (n++);
    const p = new Promise<void>((r) => waiters.set(id, r));
    await queue.add('x', { a: 1 }, { jobId: id, removeOnComplete: true, removeOnFail: true, priority: process.env.PRIO ? 1 : undefined });
    await p; waiters.delete(id); done++;
  }
}));
console.log(`jobs/s ${(done / ((Date.now() - t0) / 1000)).toFixed(0)} cpu ${(process.cpuUsage().user / 1000 + process.cpuUsage().system / 1000).toFixed(0)} ms`);
await worker.close(); await queue.obliterate({ force: true }); await queue.close(); process.exit(0);

import { readFile } from 'node:fs/promises';

/** CPU time (user + system) of a process in ms, from Linux /proc; NaN when unknown. */
export async function cpuMs(pid: number | undefined): Promise<number> {
  if (!pid) return NaN;
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
  // Fields after the parenthesised command name; utime and stime are fields 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / 100;
}

/**
 * The Linux scheduling class of this process, the load generator of a benchmark that shares
 * the machine's cores with the server it measures.
 *
 * In the default class (SCHED_OTHER) a client woken by a reply preempts the server process
 * running on that core, about once per request: the server pays a context switch and a colder
 * cache each time, a cost that a client on another machine does not impose. In the batch class
 * (SCHED_BATCH) a woken client waits for the running process's slice to end, then reads every
 * reply that came meanwhile; it still takes its share of the cores. Any process may move itself
 * between the two classes (no privilege needed), with util-linux's `chrt`.
 */
import { spawnSync } from 'node:child_process';

export type ClientClass = 'default' | 'batch';

/** Whether `chrt` can change this process's class (Linux with util-linux). */
export function clientClassAvailable(): boolean {
  if (process.platform !== 'linux') return false;
  return spawnSync('chrt', ['-p', String(process.pid)], { stdio: 'ignore' }).status === 0;
}

/** Moves every thread of this process to `cls` (children spawned later inherit it). */
export function setClientClass(cls: ClientClass): void {
  const flag = cls === 'batch' ? '-b' : '-o';
  const r = spawnSync('chrt', ['-a', flag, '-p', '0', String(process.pid)], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`chrt ${flag} failed (exit ${r.status}): ${r.stderr.trim()}`);
}

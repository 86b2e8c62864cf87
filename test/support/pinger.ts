/**
 * A PING from another thread while a read runs: how long the read blocks Redis (dashboard-listing, cron-many).
 */
import { Worker } from 'worker_threads';
import { percentiles } from './queue-app';
import { readInfraFile, type RedisTarget } from './targets';

/**
 * The slowest PING sent while a page is read (the p99 over the seconds an offset walk takes): a few ms on an
 * idle machine; a listing that blocks Redis makes it seconds (20,000 tasks before the fix: 573 ms; a step
 * script reading every chunk at once fails it too). On a loaded 2-core machine a server's single command can
 * wait for the CPU for tens of ms, so the bound is 20 ms or, when PINGs with nothing else running are slower,
 * 3 times the slowest of them over two idle seconds measured just before.
 */
const PING_BOUND_MS = 20;

export async function pingBound(target: RedisTarget): Promise<number> {
  const idle = await whilePinging(target, () => new Promise((resolve) => setTimeout(resolve, 2000)));
  return Math.max(PING_BOUND_MS, 3 * idle.pings.max);
}

/**
 * Runs `read` while PINGing, up to 3 times until the PINGs' `metric` stays under the bound (measured before
 * each try): a script that blocks Redis does so at every try, a CPU stolen by other processes rarely twice.
 */
export async function readWithoutBlocking<T>(target: RedisTarget, read: () => Promise<T>, metric: 'max' | 'p99' = 'max') {
  let tried: { result: T; pings: ReturnType<typeof percentiles> & { count: number }; bound: number } | undefined;
  for (let attempt = 0; attempt < 3; attempt++) {
    const bound = await pingBound(target);
    tried = { ...(await whilePinging(target, read)), bound };
    if (tried.pings.count > 0 && tried.pings[metric] < bound) return { ...tried, ok: true };
  }
  return { ...tried!, ok: false };
}

/** PINGs every port from a worker thread with raw RESP until stopped; returns every round trip (ms). */
function startPinger(ports: number[]): { stop: () => Promise<number[]> } {
  const code = `
    const { parentPort, workerData } = require('worker_threads');
    const net = require('net');
    const took = []; let stopping = false, open = workerData.ports.length;
    parentPort.on('message', () => { stopping = true; });
    for (const port of workerData.ports) {
      const socket = net.connect(port, '127.0.0.1');
      let sent = 0, buffer = '';
      const ping = () => { sent = performance.now(); socket.write('PING\\r\\n'); };
      socket.on('connect', ping);
      socket.on('data', (data) => {
        buffer += data.toString();
        if (!buffer.includes('\\r\\n')) return;
        buffer = '';
        took.push(performance.now() - sent);
        if (stopping) { socket.end(); if (--open === 0) parentPort.postMessage(took); } else ping();
      });
    }`;
  const worker = new Worker(code, { eval: true, workerData: { ports } });
  return {
    stop: () =>
      new Promise((resolve, reject) => {
        worker.once('message', (result: number[]) => {
          void worker.terminate();
          resolve(result);
        });
        worker.once('error', reject);
        worker.postMessage('stop');
      }),
  };
}

/** The ports of every server of the target. */
export function portsOf(target: RedisTarget): number[] {
  const info = readInfraFile();
  return target.name === 'single' ? [info.single!.port] : info.cluster!.nodes.map((n) => n.port);
}

/** Runs `work` while PINGs go to every server of the target; returns its result and the PINGs' latencies. */
export async function whilePinging<T>(target: RedisTarget, work: () => Promise<T>): Promise<{ result: T; pings: ReturnType<typeof percentiles> & { count: number } }> {
  const pinger = startPinger(portsOf(target));
  const outcome = await work().then((value) => ({ value }), (error: unknown) => ({ error }));
  const took = await pinger.stop();
  if ('error' in outcome) throw outcome.error;
  return { result: outcome.value, pings: { ...percentiles(took), count: took.length } };
}

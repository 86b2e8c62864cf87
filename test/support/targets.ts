import { randomBytes } from 'crypto';
import * as fs from 'fs';

export type TargetName = 'single' | 'cluster';

export interface RedisTarget {
  name: TargetName;
  connection: string | { cluster: { host: string; port: number }[] };
}

/** Contents of the file written by global-setup.ts (path in process.env.DQ_TEST_REDIS_FILE). */
export interface RedisInfraFile {
  single?: { url: string; port: number; pid: number };
  cluster?: { nodes: { host: string; port: number }[]; pids: number[] };
}

const ALL_TARGETS: TargetName[] = ['single', 'cluster'];

/** Targets selected by env DQ_TEST_TARGETS (comma separated, e.g. "single"); default: all. */
export function requestedTargets(): TargetName[] {
  const raw = process.env.DQ_TEST_TARGETS?.trim();
  if (!raw) return [...ALL_TARGETS];
  const names = raw.split(',').map((s) => s.trim()).filter(Boolean);
  const bad = names.filter((n) => !ALL_TARGETS.includes(n as TargetName));
  if (bad.length) throw new Error(`DQ_TEST_TARGETS: unknown target(s) ${bad.join(', ')} (known: ${ALL_TARGETS.join(', ')})`);
  return ALL_TARGETS.filter((t) => names.includes(t));
}

export function readInfraFile(): RedisInfraFile {
  const file = process.env.DQ_TEST_REDIS_FILE;
  if (!file) {
    throw new Error('DQ_TEST_REDIS_FILE is not set: run e2e tests through jest.config.js (its globalSetup starts Redis)');
  }
  return JSON.parse(fs.readFileSync(file, 'utf8')) as RedisInfraFile;
}

/** The Redis deployments started by the global setup, filtered by DQ_TEST_TARGETS. */
export function getTargets(): RedisTarget[] {
  const info = readInfraFile();
  return requestedTargets().map((name): RedisTarget => {
    if (name === 'single') {
      if (!info.single) throw new Error('single Redis target requested but not started by globalSetup');
      return { name, connection: `redis://127.0.0.1:${info.single.port}` };
    }
    if (!info.cluster) throw new Error('cluster Redis target requested but not started by globalSetup');
    return { name, connection: { cluster: info.cluster.nodes.map(({ host, port }) => ({ host, port })) } };
  });
}

const usedPrefixes = new Set<string>();

/** A short key prefix unique to this call, e.g. `t-delay-retry-k3x9qa`; characters [A-Za-z0-9_.-] only. */
export function uniquePrefix(label: string): string {
  const clean = label.replace(/[^A-Za-z0-9_.-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 24) || 'x';
  for (;;) {
    const rand = (randomBytes(4).readUInt32BE(0) % 36 ** 6).toString(36).padStart(6, '0');
    const prefix = `t-${clean}-${rand}`;
    if (!usedPrefixes.has(prefix)) {
      usedPrefixes.add(prefix);
      return prefix;
    }
  }
}

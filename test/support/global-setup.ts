import { execFile } from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { RedisClusterHandle, RedisServerHandle, startRedisCluster, startRedisServer } from './redis-server';
import { RedisInfraFile, requestedTargets } from './targets';

export interface GlobalRedisState {
  file: string;
  single?: RedisServerHandle;
  cluster?: RedisClusterHandle;
  pids: number[];
}

declare global {
  // eslint-disable-next-line no-var
  var __DQ_TEST_REDIS__: GlobalRedisState | undefined;
}

function pidsOf(state: GlobalRedisState): number[] {
  return [...(state.single ? [state.single.pid] : []), ...(state.cluster?.servers.map((s) => s.pid) ?? [])];
}

/** Jest globalSetup: starts a standalone Redis and (unless DQ_TEST_TARGETS=single) a 3-master cluster. */
export default async function globalSetup(): Promise<void> {
  const started = Date.now();
  const targets = requestedTargets();
  const runId = `${process.pid}-${Date.now().toString(36)}`;
  const state: GlobalRedisState = { file: path.join(os.tmpdir(), `dq-test-redis-${runId}.json`), pids: [] };

  // the children's compile cache, filled while the servers start (see ts-cache-warm.js)
  const warm = new Promise<string>((resolve) => {
    execFile(process.execPath, [path.join(__dirname, 'ts-cache-warm.js')], { timeout: 120_000 }, (error, stdout) =>
      resolve(error ? `not warmed (${error.message})` : stdout));
  });
  const [single, cluster] = await Promise.allSettled([
    targets.includes('single') ? startRedisServer() : Promise.resolve(undefined),
    targets.includes('cluster') ? startRedisCluster({ masters: 3 }) : Promise.resolve(undefined),
  ]);
  state.single = single.status === 'fulfilled' ? single.value : undefined;
  state.cluster = cluster.status === 'fulfilled' ? cluster.value : undefined;
  if (single.status === 'rejected' || cluster.status === 'rejected') {
    await Promise.allSettled([state.single?.remove(), state.cluster?.stop()]);
    throw single.status === 'rejected' ? single.reason : (cluster as PromiseRejectedResult).reason;
  }

  state.pids = pidsOf(state);
  const info: RedisInfraFile = {
    single: state.single && { url: state.single.url, port: state.single.port, pid: state.single.pid },
    cluster: state.cluster && { nodes: state.cluster.nodes, pids: state.cluster.servers.map((s) => s.pid) },
  };
  fs.writeFileSync(state.file, JSON.stringify(info, null, 2));
  process.env.DQ_TEST_REDIS_FILE = state.file;
  globalThis.__DQ_TEST_REDIS__ = state;

  // Last resort if teardown never runs (crash, forced exit): SIGKILL exactly the pids we started.
  process.once('exit', () => {
    const current = globalThis.__DQ_TEST_REDIS__;
    if (current !== state) return;
    for (const pid of pidsOf(state)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* already gone */
      }
    }
    fs.rmSync(state.file, { force: true });
  });

  const warmed = await warm;
  const ports = [state.single?.port, ...(state.cluster?.nodes.map((n) => n.port) ?? [])].filter(Boolean);
  process.stderr.write(
    `\n[dq-test] redis ${targets.join('+')} up on 127.0.0.1:${ports.join(',')} in ${Date.now() - started}ms (${state.file}); compile cache: ${warmed}\n`,
  );
}

import { createHash } from 'crypto';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { REPO_ROOT } from './child';

/** One lock per checkout (a CI clone and a working tree do not wait on each other). */
const LOCK_DIR = path.join(os.tmpdir(), `dq-build-lock-${createHash('sha1').update(REPO_ROOT).digest('hex').slice(0, 12)}`);

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** The pid that holds the lock; 0 while it is being taken or was just released. */
const lockOwner = (): number => {
  try {
    return Number(fs.readFileSync(path.join(LOCK_DIR, 'pid'), 'utf8')) || 0;
  } catch {
    return 0;
  }
};

/**
 * Runs `fn` while holding this checkout's build lock, across Jest workers. The suites that rebuild the
 * library's `dist/` (the sample's `npm start`, the packed-library test) hold it while they build and while
 * they run from it: the library's build empties `dist/` first, so an app started from it while another
 * build runs finds its scripts missing. A lock left by a process that died is taken over.
 */
export async function withBuildLock<T>(fn: () => Promise<T>, waitMs = 300_000): Promise<T> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    try {
      fs.mkdirSync(LOCK_DIR);
      fs.writeFileSync(path.join(LOCK_DIR, 'pid'), String(process.pid));
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const owner = lockOwner();
      if (owner > 0 && !alive(owner)) fs.rmSync(LOCK_DIR, { recursive: true, force: true });
      else if (Date.now() > deadline) throw new Error(`build lock ${LOCK_DIR} still held by pid ${owner || '?'} after ${waitMs} ms`);
      else await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
  try {
    return await fn();
  } finally {
    fs.rmSync(LOCK_DIR, { recursive: true, force: true });
  }
}

import { Cluster, Command, type Redis } from 'ioredis';
import type { DelayQueueStore } from '../delay/delay-queue.store';
import { DurabilityError } from '../errors/durability.error';
import type { ResolvedDurability } from '../options/resolve-durability';
import type { RouteStore } from '../route/route.store';
import { hashSlot } from '../route/slot-spread';
import { closeRedisClient } from './redis-connection';
import type { RedisClient } from './script-loader';

/**
 * Where a write was applied: the connection (a server's client; on a cluster, the node's) and the socket its
 * reply came on. `WAIT` covers only the writes of its own connection, and a new socket is a new connection
 * (after a reconnect, or a failover, to another server): a `WAIT` on it would confirm nothing of this write.
 */
export interface WriteMark {
  node: Redis | null;
  socket: object | undefined;
}

/** What a `WAIT` found: replicas that acknowledged, or why none could be asked. */
export interface ReplicaAcks {
  acknowledged: number;
  reason?: string;
}

/** A `WAIT` sent on a node's connection, which calls whose write's reply came before its own reply may join. */
interface PendingWait {
  socket: object | undefined;
  replicas: number;
  timeoutMs: number;
  /** Set when its reply (or failure) arrived: from then on a write's reply may have come after it. */
  settled: boolean;
  acks: Promise<ReplicaAcks>;
}

const LOST = 'the connection to the master was lost after the write';

/** `WAIT numreplicas timeout`, noting the socket it was written on and when its reply arrived. */
class WaitCommand extends Command {
  socket?: object;

  constructor(replicas: number, timeoutMs: number, private readonly expected: object, onSettled: () => void) {
    super('wait', [replicas, timeoutMs], { replyEncoding: 'utf8' });
    // NOTE: set as the parser hands over the reply, before any promise callback: see `confirm`.
    const { resolve, reject } = this;
    this.resolve = (value) => {
      onSettled();
      return resolve(value);
    };
    this.reject = (error) => {
      onSettled();
      reject(error);
    };
  }

  override toWritable(socket: object): string | Buffer {
    this.socket = socket;
    // NOTE: ioredis re-sends a call in flight after a reconnect. On another connection this WAIT would
    // confirm nothing and block it up to its timeout: `WAIT 0 0` answers at once instead.
    if (socket !== this.expected) this.args = ['0', '0'];
    return super.toWritable(socket);
  }
}

function socketOf(node: Redis): object | undefined {
  return (node as unknown as { stream?: object }).stream;
}

/**
 * Durable writes (the module option `durability`): a connection of their own (`dq:<prefix>:durable`), the
 * stores on it, and the `WAIT` after each write.
 *
 * NOTE: `WAIT` blocks the connection it is sent on (the server processes nothing else of that client until
 * it returns), and covers only that connection's writes: hence a connection apart from the commands one,
 * whose workers' takes and acks it must not hold up. Group commit: while a `WAIT` is in flight on a node,
 * a write whose reply arrives before the `WAIT`'s reply was processed before it (one connection's replies
 * come in order), so it joins that `WAIT` instead of sending another.
 */
export class DurableWrites {
  private readonly pending = new Map<Redis, PendingWait>();

  constructor(
    readonly client: RedisClient,
    readonly store: DelayQueueStore,
    readonly routeStore: RouteStore | null,
    /** A `WAIT` with no reply within this long (a silent node) counts no replica. */
    private readonly redisTimeoutMs: number,
  ) {}

  /**
   * Notes where a write to `key` was applied. Call it right as its reply arrives (in the same turn of the
   * event loop: no I/O in between), so that the socket is the one the reply came on.
   */
  mark(key: string): WriteMark {
    if (!(this.client instanceof Cluster)) return { node: this.client, socket: socketOf(this.client) };
    const cluster = this.client;
    const at = (cluster as unknown as { slots: string[][] }).slots[hashSlot(key)]?.[0];
    const node = cluster.nodes('master').find((n) => `${n.options.host}:${n.options.port}` === at) ?? null;
    return { node, socket: node ? socketOf(node) : undefined };
  }

  /**
   * Runs `write` (one call to `key`'s node) and marks where it was applied as its reply arrives. Waits first
   * for the `WAIT`s in flight (see `idle`).
   */
  async write<T>(key: string, write: () => Promise<T>): Promise<{ value: T; mark: WriteMark }> {
    await this.idle();
    return write().then((value) => ({ value, mark: this.mark(key) }));
  }

  /** Runs a write of `type`'s delay queue on the durable connection, adding where it was applied to `marks`. */
  async delayWrite<T>(marks: WriteMark[], type: string, call: (store: DelayQueueStore) => Promise<T>): Promise<T> {
    const { value, mark } = await this.write(this.store.keys(type).jobs, () => call(this.store));
    marks.push(mark);
    return value;
  }

  /**
   * `result` once `policy.replicas` replicas acknowledged every marked write (at once with none marked);
   * `DurabilityError` carrying it when fewer did within `policy.timeoutMs`.
   */
  async confirmed<R>(marks: WriteMark[], policy: ResolvedDurability, result: R): Promise<R> {
    if (marks.length === 0) return result;
    const acks = await this.confirm(marks, policy);
    if (acks.acknowledged < policy.replicas) throw new DurabilityError(acks.acknowledged, policy.replicas, policy.timeoutMs, result, acks.reason);
    return result;
  }

  /**
   * Resolves once no `WAIT` is in flight. Writes wait here rather than behind a blocked `WAIT` in the
   * server: there, their replies would be held up to its timeout, counted in their own call bound
   * (`redisTimeoutMs`), and a call timing out drops the connection. Released together, their replies come
   * before the next `WAIT`'s, so they share it.
   */
  async idle(): Promise<void> {
    const inFlight = [...this.pending.values()].filter((w) => !w.settled).map((w) => w.acks);
    if (inFlight.length > 0) await Promise.all(inFlight);
  }

  /**
   * Waits until `policy.replicas` replicas acknowledged every marked write (one `WAIT` per node written,
   * joined with one in flight when it can be); resolves with the fewest acknowledged of the nodes (0 with a
   * reason when a node's connection changed since its write, or its `WAIT` failed). Never rejects.
   */
  async confirm(marks: WriteMark[], policy: ResolvedDurability): Promise<ReplicaAcks> {
    const nodes = new Map<Redis | null, WriteMark>();
    for (const mark of marks) {
      const seen = nodes.get(mark.node);
      // NOTE: two writes on one node over two sockets: the first socket is gone, its writes unconfirmable.
      if (seen && seen.socket !== mark.socket) return { acknowledged: 0, reason: LOST };
      nodes.set(mark.node, mark);
    }
    const all = await Promise.all([...nodes.values()].map((mark) => this.waitFor(mark, policy)));
    return all.reduce((least, acks) => (acks.acknowledged < least.acknowledged ? acks : least), { acknowledged: Number.MAX_SAFE_INTEGER });
  }

  private waitFor(mark: WriteMark, policy: ResolvedDurability): Promise<ReplicaAcks> {
    const { node, socket } = mark;
    if (!node || !socket) return Promise.resolve({ acknowledged: 0, reason: 'the node that applied the write is not known any more' });
    if (node.status !== 'ready' || socketOf(node) !== socket) return Promise.resolve({ acknowledged: 0, reason: LOST });
    const inFlight = this.pending.get(node);
    if (inFlight && !inFlight.settled && inFlight.socket === socket && inFlight.replicas >= policy.replicas && inFlight.timeoutMs === policy.timeoutMs) {
      return inFlight.acks;
    }
    const wait: PendingWait = { socket, replicas: policy.replicas, timeoutMs: policy.timeoutMs, settled: false, acks: Promise.resolve({ acknowledged: 0 }) };
    const command = new WaitCommand(policy.replicas, policy.timeoutMs, socket, () => (wait.settled = true));
    wait.acks = this.send(node, command, socket);
    this.pending.set(node, wait);
    void wait.acks.then(() => {
      if (this.pending.get(node) === wait) this.pending.delete(node);
    });
    return wait.acks;
  }

  private async send(node: Redis, command: WaitCommand, socket: object): Promise<ReplicaAcks> {
    let timer: NodeJS.Timeout | undefined;
    let onClose: (() => void) | undefined;
    // NOTE: a cluster's node connections carry no call bound of their own (the cluster's calls do); a
    // connection lost meanwhile answers at once (what it wrote cannot be confirmed any more).
    const silent = new Promise<ReplicaAcks>((resolve) => {
      timer = setTimeout(() => resolve({ acknowledged: 0, reason: `no reply to WAIT within ${this.redisTimeoutMs} ms` }), this.redisTimeoutMs);
      onClose = () => resolve({ acknowledged: 0, reason: LOST });
      node.once('close', onClose);
    });
    const reply = (node.sendCommand(command as never) as Promise<unknown>).then(
      (count): ReplicaAcks => {
        // NOTE: re-sent on a new socket after a reconnect (ioredis does that): it says nothing of this write.
        if (command.socket !== socket) return { acknowledged: 0, reason: LOST };
        return { acknowledged: Number(count) };
      },
      (error: Error): ReplicaAcks => ({ acknowledged: 0, reason: `WAIT failed: ${error.message}` }),
    );
    try {
      return await Promise.race([reply, silent]);
    } finally {
      clearTimeout(timer);
      node.off('close', onClose!);
    }
  }

  /** Closes the connection (application shutdown). */
  async onApplicationShutdown(): Promise<void> {
    await closeRedisClient(this.client);
  }
}

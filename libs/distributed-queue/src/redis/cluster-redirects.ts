import type { Cluster, ClusterOptions } from 'ioredis';

type NatMap = NonNullable<ClusterOptions['natMap']>;

/** The mapped `host:port` of a node's `host:port` as the cluster announces it, or undefined if unmapped. */
function mapAddress(natMap: NatMap, address: string): string | undefined {
  const mapped = typeof natMap === 'function' ? natMap(address) : natMap[address];
  return mapped ? `${mapped.host}:${mapped.port}` : undefined;
}

/**
 * Makes a cluster client with a natMap follow MOVED replies to the mapped address.
 *
 * NOTE: ioredis (5.x, still so upstream) writes a MOVED reply's address into its slot table as the server
 * sent it, while it keys its connections by mapped address (as a slots refresh fills the table). The
 * re-sent command then finds no connection for its slot and goes to a random master; each wrong one
 * answers MOVED again (and the write lands in the entry the slot shares with its whole range, so the other
 * commands of the range stray too) until a random pick is right, or `maxRedirections` (16) fails the
 * command. It shows after any lost connection: ioredis re-sends the commands it had in flight to a random
 * master. Rewriting the address in the reply to its mapped form, before ioredis reads it, keeps the slot
 * table on mapped addresses. Skipped for a natMap function that would map the mapped address again
 * (ioredis maps it once more to find the connection).
 */
export function followMovedThroughNatMap(client: Cluster): void {
  const natMap = client.options.natMap;
  if (!natMap) return;
  const handleError = client.handleError;
  client.handleError = function (this: Cluster, error, ttl, handlers): void {
    const [kind, slot, address] = typeof error?.message === 'string' ? error.message.split(' ') : [];
    if (kind === 'MOVED' && address) {
      const mapped = mapAddress(natMap, address);
      const again = mapped && mapAddress(natMap, mapped);
      if (mapped && (!again || again === mapped)) error.message = `MOVED ${slot} ${mapped}`;
    }
    handleError.call(this, error, ttl, handlers);
  };
}

/** The parts of an ioredis Pipeline this file uses (ioredis does not export its internals). */
interface PipelineInternals {
  _queue: { promise: Promise<unknown> }[];
  replyPending: number;
  exec(callback?: unknown): Promise<unknown>;
  reject(error: Error): void;
}

const SLOT_GROUPS = /^All keys in the pipeline should belong to the same slots allocation group/;

/**
 * Makes a cluster client's pipelines (its auto-pipelines above all) go out command by command when their
 * keys' slots are no longer served by one node.
 *
 * NOTE: an auto-pipeline gathers the commands of one tick whose slots one node serves; when a slot moves
 * (resharding, failover) before it is sent, ioredis refuses the whole pipeline ("All keys in the pipeline should
 * belong to the same slots allocation group"), nothing sent, and every caller gets that error: the route
 * queue's takes, acks and rebalance failed while slots moved. Each command is sent on its own instead, in
 * order (where ioredis follows MOVED/ASK and retries TRYAGAIN), and the pipeline answers as if it ran them.
 */
export function splitPipelinesAcrossNodes(client: Cluster): void {
  const pipeline = client.pipeline;
  client.pipeline = function (this: Cluster, ...args: Parameters<Cluster['pipeline']>) {
    const created = pipeline.apply(this, args) as unknown as PipelineInternals;
    const exec = created.exec;
    created.exec = function (this: PipelineInternals, callback?: unknown) {
      const reject = this.reject;
      this.reject = (error: Error) => {
        if (!SLOT_GROUPS.test(error.message)) return reject.call(this, error);
        // The pipeline collects each command's reply as it settles (it listens to the commands' promises).
        this.replyPending = this._queue.length;
        for (const command of this._queue) void client.sendCommand(command as never);
      };
      return exec.call(this, callback);
    };
    return created as never;
  };
}

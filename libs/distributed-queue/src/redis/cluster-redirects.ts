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

import type { LoggerService } from '@nestjs/common';
import { planAssignment } from './assignment';
import type { FlowProgress } from '../flow/flow-progress';
import { PartitionRunner, type OrderedWorker, type RunnerContext } from './partition-runner';
import type { RouteStore } from './route.store';
import { ensureTopology, recreateIfLost } from './route-topology';
import { Slots } from './slots';
import { shutdownCall } from '../runtime/graceful-stop';
import { SharedTimeouts } from '../runtime/shared-timeouts';
import type { TaskEventBus } from '../events/task-event-bus';
import { reportFailure } from '../redis/outage-log';
import type { AckDurability } from '../redis/ack-durability';

/**
 * This application instance as a member of the route queue (seed 000's machine): registers and
 * heartbeats, renews the leases of its partitions and runs one `PartitionRunner` per owned partition;
 * when it holds the scheduler lock it evicts silent machines and (re)assigns partitions.
 */
export class RouteMachine {
  private readonly runners = new Map<number, PartitionRunner>();
  private readonly renewedAt = new Map<number, number>();
  private beating?: Promise<void>;
  private beatAgain = false;
  private planning = false;
  private stopped = false;
  private readonly ctx: RunnerContext;
  /** When a heartbeat last reached Redis (epoch ms, this process's clock; 0: never): health checks read it. */
  lastHeartbeatAt = 0;

  constructor(
    private readonly store: RouteStore,
    workers: Map<string, OrderedWorker>,
    private readonly logger: LoggerService,
    events?: TaskEventBus,
    durableAcks?: AckDurability | null,
    flows?: FlowProgress | null,
  ) {
    const { heartbeatMs, offlineMs } = store.options;
    // NOTE: a claim is fresh while no eviction can have happened: the scheduler evicts after offlineMs without
    // a heartbeat; one heartbeat period of margin covers the time the renewal took to arrive.
    const freshFor = offlineMs - heartbeatMs;
    this.ctx = {
      store,
      me: store.options.machineId,
      workers,
      slots: new Map([...workers].map(([type, w]) => [type, new Slots(w.options.concurrency)])),
      timeouts: new Map([...workers].map(([type, w]) => [type, new SharedTimeouts(w.options.timeoutMs)])),
      logger,
      events,
      durableAcks: durableAcks ?? undefined,
      flows: flows ?? undefined,
      leaseFresh: (p) => performance.now() - (this.renewedAt.get(p) ?? -Infinity) < freshFor,
      onEnd: (runner) => {
        if (this.runners.get(runner.partition) === runner) this.runners.delete(runner.partition);
        if (!this.stopped) this.requestHeartbeat();
      },
    };
  }

  /** This machine's id (`route.machineId`). */
  get id(): string {
    return this.ctx.me;
  }

  /** Partitions this machine runs now. */
  get owned(): number[] {
    return [...this.runners.keys()].sort((a, b) => a - b);
  }

  /** Joins: registers, then takes part in scheduling at once. */
  async start(): Promise<void> {
    await ensureTopology(this.store, this.store.options.partitions);
    await this.heartbeat();
    await this.rebalance();
  }

  /** A message of the queue's events channel. */
  onEvent(message: string): void {
    if (this.stopped) return;
    const [kind, arg] = message.split(':');
    if (kind === 'p') this.runners.get(Number(arg))?.notify();
    else if (kind === 'h') this.runners.get(Number(arg))?.pause();
    else if (kind === 'o') this.requestHeartbeat();
    else if (kind === 'r') void this.rebalance();
  }

  /** Every runner takes again now (after a reconnect: a push's message may have been missed meanwhile). */
  wakeAll(): void {
    for (const runner of this.runners.values()) runner.notify();
  }

  /** Runs a heartbeat now, or right after the one in progress. */
  requestHeartbeat(): void {
    if (this.beating) this.beatAgain = true;
    else void this.heartbeat();
  }

  /** Heartbeat (seed 000): record this machine; renew, start, hand over or drop its partitions. */
  heartbeat(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.beating) return this.beating;
    this.beating = this.beat()
      .catch((error: Error) => reportFailure(this.logger, '[route] heartbeat', error))
      .finally(() => {
        this.beating = undefined;
        if (this.beatAgain) {
          this.beatAgain = false;
          void this.heartbeat();
        }
      });
    return this.beating;
  }

  private async beat(): Promise<void> {
    const sentAt = performance.now();
    const planned = await this.store.heartbeat(this.ctx.me);
    this.lastHeartbeatAt = Date.now();
    const check = new Set([...planned, ...this.runners.keys()]);
    await Promise.all(
      [...check].map(async (p) => {
        const running = this.runners.get(p);
        const claim = await this.store.renew(p, this.ctx.me, !running);
        if (this.stopped) return;
        if (!claim.owned) {
          running?.lost();
          return;
        }
        this.renewedAt.set(p, sentAt);
        if (running && running.epoch !== claim.epoch) running.lost();
        if (!running || running.epoch !== claim.epoch) {
          const runner = new PartitionRunner(p, claim.epoch, this.ctx);
          this.runners.set(p, runner);
        }
        if (claim.state === 'revoking') this.runners.get(p)?.revoke();
        // NOTE: a pause message may have been missed: the heartbeat tells the runner too.
        if (claim.paused) this.runners.get(p)?.pause();
      }),
    );
  }

  /** Scheduler round (one machine at a time): evict, plan ⌊N/M⌋..⌈N/M⌉ per machine, move partitions. */
  async rebalance(): Promise<void> {
    if (this.planning || this.stopped) return;
    this.planning = true;
    try {
      const { rebalanceMs, offlineMs } = this.store.options;
      if (!(await this.store.lock(this.ctx.me, Math.min(3 * rebalanceMs, offlineMs)))) return;
      await recreateIfLost(this.store, this.logger);
      const { live } = await this.store.evict();
      live.sort();
      const owners = await this.store.owners(await this.store.partitionCount());
      const plan = planAssignment(owners.length, live, owners);
      if (!(await this.store.savePlan(this.ctx.me, plan))) return;
      const alive = new Set(live);
      await Promise.all(
        plan.map((m, p) => (m ? this.store.assign(p, m, owners[p] !== undefined && alive.has(owners[p]!)) : undefined)),
      );
    } catch (error) {
      reportFailure(this.logger, '[route] rebalance', error);
    } finally {
      this.planning = false;
    }
  }

  /**
   * Leaves: stops the runners (running batches get `timeoutMs`), gives the partitions up and deregisters,
   * so that the other machines take over at once instead of after the offline threshold.
   */
  async stop(timeoutMs: number): Promise<void> {
    this.stopped = true;
    await shutdownCall(this.beating, 'heartbeat').catch(() => undefined);
    const runners = [...this.runners.values()];
    await Promise.all(runners.map((r) => r.stop(timeoutMs)));
    try {
      await shutdownCall(Promise.all(runners.map((r) => this.store.leave(r.partition, this.ctx.me, r.epoch))), 'leaving the partitions');
      await shutdownCall(this.store.depart(this.ctx.me), 'departing');
    } catch (error) {
      reportFailure(this.logger, '[route] leaving', error, `[route] leaving failed (the others take over after the offline threshold): ${(error as Error).message}`);
    }
  }
}

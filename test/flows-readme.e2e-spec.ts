/**
 * The README's flows section, claim by claim (single server and cluster):
 * | claim                                                        | cell                                         |
 * |--------------------------------------------------------------|----------------------------------------------|
 * | the example compiles and runs                                | 12 lines priced, rendered once, emailed once |
 * | a node reads its dependencies' results in task.flow.results  | the total is the sum of the 12 results       |
 * | an id of your own: a repeated submitFlow creates nothing     | the second call: created false, one email    |
 * | getFlow shows every node's state and result; the flow ends   | state completed, 14 nodes completed          |
 */
import 'reflect-metadata';
import { TaskFlowService } from 'nestjs-distributed-queue';
import { EmailInvoiceWorker, InvoiceService, PriceLineWorker, RenderInvoiceWorker } from './fixtures/flows-readme';
import { useQueueApps } from './support/queue-app';
import { getTargets, uniquePrefix, type RedisTarget } from './support/targets';
import { sleep, waitFor } from './support/wait';

describe.each(getTargets().map((t) => [t.name, t] as const))('the README flows example on %s', (_name, target: RedisTarget) => {
  const { start } = useQueueApps(target);

  it('prices 12 lines, renders once they are priced, emails once rendered; a repeat creates nothing', async () => {
    const app = await start({ connection: target.connection, keyPrefix: uniquePrefix('flow-readme') }, [PriceLineWorker, RenderInvoiceWorker, EmailInvoiceWorker, InvoiceService]);
    const invoices = app.app.get(InvoiceService);
    const lines = Array.from({ length: 12 }, (_, i) => ({ sku: `sku-${i}`, qty: i + 1 }));
    const id = await invoices.bill('42', lines);
    const flows = app.app.get(TaskFlowService);
    await waitFor(async () => (await flows.getFlow(id))?.state === 'completed', { timeoutMs: 15_000 });
    const email = app.app.get(EmailInvoiceWorker);
    expect(email.sent).toEqual([78 * 250]);
    const flow = (await flows.getFlow(id))!;
    expect(flow.counts).toMatchObject({ total: 14, completed: 14, dead: 0 });
    expect(flow.nodes.find((n) => n.ref === 'render')).toMatchObject({ state: 'completed', result: { totalCents: 78 * 250 } });
    expect((await flows.submitFlow([{ ref: 'x', type: 'invoice.email', payload: { invoiceId: '42' } }], { id })).created).toBe(false);
    await sleep(500);
    expect(email.sent).toHaveLength(1);
  });
});
